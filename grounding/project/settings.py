"""Settings for the grounding-link registry, read from the environment.

Defaults are safe for production (DEBUG off, no hosts allowed, a secret key is
required); `make run` sets what local use needs.
"""

import base64
import sysconfig
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp import constants as csp
from django.core.exceptions import ImproperlyConfigured

from grounding.project.db_timeouts import POSTGRESQL_ENGINES, SQLITE_OPTIONS, with_timeouts
from grounding.project.env import env_bool, env_int, env_list, env_str, load_env_file

BASE_DIR = Path(__file__).resolve().parent.parent.parent

# Local defaults from `.env` beside manage.py (`make install` writes it from
# `.env.example`: DEBUG on, text logs); the environment always wins, and the image
# has no such file. README "Settings (environment)".
ENV_FILE = load_env_file(BASE_DIR / ".env")

DEBUG = env_bool("DJANGO_DEBUG", default=False)

# `DJANGO_ENV=production` turns on what needs a TLS-terminating proxy in front and
# collected static files (HTTPS redirect, trusted X-Forwarded-Proto, hashed static
# names). Without it (local runs, the test suite) those stay off; README "Deployment".
PRODUCTION = env_str("DJANGO_ENV", default="").strip().lower() == "production"
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("DJANGO_DEBUG must be off when DJANGO_ENV=production.")

SECRET_KEY = env_str("DJANGO_SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY is required when DJANGO_DEBUG is off.")
    SECRET_KEY = "insecure-local-development-key-do-not-use-in-production"

ALLOWED_HOSTS = env_list(
    "DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"] if DEBUG else []
)

# HTTPS and browser hardening (`manage.py check --deploy` passes with DJANGO_ENV=production).
# Each can be overridden by its own variable.
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https")
    if env_bool("DJANGO_SECURE_PROXY_SSL_HEADER", default=PRODUCTION)
    else None
)
USE_X_FORWARDED_HOST = env_bool("DJANGO_USE_X_FORWARDED_HOST", default=False)
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", default=PRODUCTION)
# Probes reach the app server directly over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz/?$", r"^readyz/?$"]
SESSION_COOKIE_SECURE = env_bool("DJANGO_SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env_bool("DJANGO_CSRF_COOKIE_SECURE", default=not DEBUG)
SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", default=0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool(
    "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", default=SECURE_HSTS_SECONDS > 0
)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", default=SECURE_HSTS_SECONDS > 0)
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

# Content-Security-Policy on every response (django-csp): the admin, the link pages
# and Swagger UI (served from drf-spectacular-sidecar, its script split out of the
# page) load only their own scripts and styles; no inline script, no framing.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [csp.SELF],
        "script-src": [csp.SELF],
        "style-src": [csp.SELF],
        "img-src": [csp.SELF, "data:"],
        "font-src": [csp.SELF],
        "connect-src": [csp.SELF],
        "object-src": [csp.NONE],
        "base-uri": [csp.SELF],
        "form-action": [csp.SELF],
        "frame-ancestors": [csp.NONE],
    }
}

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    # Client tokens, stored hashed with an expiry (policies/tokens.py).
    "knox",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "simple_history",
    # Sign-in lockout per username and client address (below; policies/lockout.py).
    "axes",
    "policies",
    # The signed Merkle log per Dimension (docs/transparency.md): above policies, below
    # evidence and grounding, which tell it their committed tables at start-up.
    "transparency",
    "evidence",
    # The event feed: outbox, signed webhooks, the stream (docs/events.md). Above
    # grounding in the dependency rule; listed before it because grounding's ready()
    # must run last (it freezes what start-up loaded).
    "feed",
    "grounding",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Times every request by its route for /metrics (feed.api.metrics; static files
    # answered by WhiteNoise above are not timed).
    "feed.api.metrics.RequestTimingMiddleware",
    "csp.middleware.CSPMiddleware",
    "grounding.project.headers.ApiNoStoreMiddleware",
    "common.kernel.request_context.RequestIdMiddleware",
    "common.web.middleware.ApiNotFoundMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    # Last, as django-axes asks: turns a locked-out sign-in into its 429 page.
    "axes.middleware.AxesMiddleware",
]

# Optional name of this app server, echoed as `X-Served-By` on every response so the
# server that answered behind the proxy can be told (grounding/project/served_by.py).
GROUNDING_SERVER_NAME = env_str("GROUNDING_SERVER_NAME", default="")
if GROUNDING_SERVER_NAME:
    MIDDLEWARE.insert(0, "grounding.project.served_by.ServedByMiddleware")

ROOT_URLCONF = "grounding.project.urls"
WSGI_APPLICATION = "grounding.project.wsgi.application"

# templates/ of a checkout, else the wheel's copy (pyproject.toml `data-files`: the
# installation's data folder, share/grounding-registry/templates).
PROJECT_TEMPLATE_DIRS = [
    folder
    for folder in (
        BASE_DIR / "templates",
        Path(sysconfig.get_path("data")) / "share" / "grounding-registry" / "templates",
    )
    if folder.is_dir()
][:1]

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # Project-wide templates (the admin's chrome, the error pages) in the top-level
        # templates/ of a checkout, or where an installed wheel put it; each app's own
        # in <app>/templates/.
        "DIRS": PROJECT_TEMPLATE_DIRS,
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        env="DATABASE_URL",
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", default=60),
        conn_health_checks=True,
    )
}

# SQLite (`make run`, the SQLite test pass) with concurrent writers: the dev server's
# threads and the inline log sequencer. A deferred transaction that read first cannot
# take the write lock another holds, and SQLite answers "database is locked" at once,
# without waiting (its deadlock rule): a 503 for a request that merely came second.
# IMMEDIATE takes the write lock at BEGIN, so writers queue (up to `timeout` seconds);
# WAL lets readers read meanwhile.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"].setdefault("OPTIONS", {}).update(SQLITE_OPTIONS)

# Optional read replica: list/read queries go there, anything in a write transaction
# or a write request stays on the primary (grounding/project/db_router.py). Tests mirror it
# onto the test database.
if env_str("DATABASE_REPLICA_URL", default=""):
    DATABASES["replica"] = {
        **dj_database_url.config(
            env="DATABASE_REPLICA_URL",
            conn_max_age=env_int("DATABASE_CONN_MAX_AGE", default=60),
            conn_health_checks=True,
        ),
        "TEST": {"MIRROR": "default"},
    }
    DATABASE_ROUTERS = ["grounding.project.db_router.ReplicaRouter"]
    MIDDLEWARE.insert(
        MIDDLEWARE.index("common.kernel.request_context.RequestIdMiddleware") + 1,
        "grounding.project.db_router.PrimaryForWritesMiddleware",
    )

# A connection pooler in front of the databases (README "Operating the topology").
# PgBouncer in transaction mode gives each transaction any server connection, so
# nothing may outlive a transaction: no server-side (WITH HOLD) cursors and no
# prepared statements. Session mode, or no pooler, needs nothing.
DATABASE_POOLER = env_str("DATABASE_POOLER", default="").strip().lower()
if DATABASE_POOLER not in ("", "session", "transaction"):
    raise ImproperlyConfigured("DATABASE_POOLER must be unset, 'session' or 'transaction'.")
if DATABASE_POOLER == "transaction":
    for _database in DATABASES.values():
        _database["DISABLE_SERVER_SIDE_CURSORS"] = True
        if _database["ENGINE"] == "django.db.backends.postgresql":
            _database.setdefault("OPTIONS", {})["prepare_threshold"] = None
# A hung or refused database fails each request within seconds (503 database_unavailable
# with Retry-After) instead of holding a worker thread: grounding/project/db_timeouts.py. Seconds;
# 0 turns a limit off (e.g. DATABASE_STATEMENT_TIMEOUT=0 for a long one-off migration).
DATABASE_CONNECT_TIMEOUT = env_int("DATABASE_CONNECT_TIMEOUT", default=3)
DATABASE_STATEMENT_TIMEOUT = env_int("DATABASE_STATEMENT_TIMEOUT", default=30)
DATABASE_LOCK_TIMEOUT = env_int("DATABASE_LOCK_TIMEOUT", default=10)
DATABASE_IDLE_IN_TRANSACTION_TIMEOUT = env_int("DATABASE_IDLE_IN_TRANSACTION_TIMEOUT", default=60)
# PgBouncer (1.18) refuses the `options` startup parameter these travel in: behind a
# transaction-mode pooler the server-side ones are set on the role instead
# (ALTER ROLE … SET statement_timeout = …; README "Operating the topology").
_SERVER_SIDE = DATABASE_POOLER != "transaction"
for _alias, _config in DATABASES.items():
    DATABASES[_alias] = with_timeouts(
        _config,
        connect=DATABASE_CONNECT_TIMEOUT,
        statement=DATABASE_STATEMENT_TIMEOUT if _SERVER_SIDE else 0,
        lock=DATABASE_LOCK_TIMEOUT if _SERVER_SIDE else 0,
        idle_in_transaction=DATABASE_IDLE_IN_TRANSACTION_TIMEOUT if _SERVER_SIDE else 0,
    )
# The replica: a short connect timeout (psycopg's floor, 2 s), so a lost replica is
# noticed fast by its monitor; reads go to the primary while the replica is down or
# further behind than DATABASE_REPLICA_MAX_LAG seconds (grounding/project/replica_health.py).
if DATABASES.get("replica", {}).get("ENGINE") in POSTGRESQL_ENGINES:
    _replica_options = DATABASES["replica"].setdefault("OPTIONS", {})
    _replica_options["connect_timeout"] = min(int(_replica_options.get("connect_timeout") or 2), 2)
DATABASE_REPLICA_MAX_LAG = env_int("DATABASE_REPLICA_MAX_LAG", default=5)
# Seconds a client is told to wait (Retry-After) when the database does not answer.
GROUNDING_DATABASE_RETRY_AFTER = env_int("GROUNDING_DATABASE_RETRY_AFTER", default=5)
# /readyz gives up on the database checks after this long (milliseconds) and says 503.
GROUNDING_READYZ_TIMEOUT_MS = env_int("GROUNDING_READYZ_TIMEOUT_MS", default=1500)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("DJANGO_STATIC_ROOT", default=str(BASE_DIR / "staticfiles")))
# Static files are served by WhiteNoise. In production they are collected at image build
# (`collectstatic`) under hashed, compressed names; elsewhere (DEBUG, the test suite) they
# are found in the apps on request, so nothing needs collecting.
STATIC_MANIFEST = env_bool("DJANGO_STATIC_MANIFEST", default=PRODUCTION)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if STATIC_MANIFEST
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = not STATIC_MANIFEST
WHITENOISE_AUTOREFRESH = not STATIC_MANIFEST
LOGIN_URL = "admin:login"

# Sign-in lockout (django-axes; README "Sign-in lockout", policies/lockout.py): after
# this many failed sign-ins of one username from one client address, that pair is
# refused (a plain 429 page) for the cooling period, counted from the failure that
# locked it; refused tries do not extend it. Another username at that address, and
# that username elsewhere, sign in as before. Each lockout writes one audit event.
# Counts are rows in the database (axes' tables), so every worker and server shares them.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out pair
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("GROUNDING_LOGIN_FAILURE_LIMIT", default=5)
GROUNDING_LOGIN_COOLOFF_MINUTES = env_int("GROUNDING_LOGIN_COOLOFF_MINUTES", default=15)
if AXES_FAILURE_LIMIT < 1 or GROUNDING_LOGIN_COOLOFF_MINUTES < 1:
    raise ImproperlyConfigured(
        "GROUNDING_LOGIN_FAILURE_LIMIT and GROUNDING_LOGIN_COOLOFF_MINUTES must be at least 1."
    )
AXES_COOLOFF_TIME = timedelta(minutes=GROUNDING_LOGIN_COOLOFF_MINUTES)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_HANDLER = "axes.handlers.database.AxesDatabaseHandler"
# The address throttling counts by (GROUNDING_TRUSTED_PROXIES; REMOTE_ADDR by default).
AXES_CLIENT_IP_CALLABLE = "policies.lockout.client_address"
AXES_LOCKOUT_CALLABLE = "policies.lockout.lockout_response"
# No unaudited unlock through axes' admin pages (`manage.py axes_reset…` unlocks), and
# no row per successful sign-in: only failures are kept, until their cooling period ends.
AXES_ENABLE_ADMIN = False
AXES_DISABLE_ACCESS_LOG = True

# Requests larger than this (8 MiB unless set) are refused before any view runs.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("GROUNDING_MAX_BODY_BYTES", default=8 * 1024 * 1024)
# Input bounds (README "Settings"): refused with 400 and a pointer naming the limit.
# Deeper JSON bodies are refused by the parser, before any view or validator recurses.
GROUNDING_MAX_JSON_DEPTH = env_int("GROUNDING_MAX_JSON_DEPTH", default=64)
# Any one string in an operation's input (refs, reasons, texts inside values).
GROUNDING_MAX_STRING_LENGTH = env_int("GROUNDING_MAX_STRING_LENGTH", default=16384)
# Any one structured (JSON-valued) data element, as compact UTF-8 JSON.
GROUNDING_MAX_VALUE_BYTES = env_int("GROUNDING_MAX_VALUE_BYTES", default=64 * 1024)

# PDF evidence (docs/api.md "PDF evidence"): larger uploads are 413 too_large, more
# pages 422 invalid_pdf too_many_pages. Text is extracted in a child process held to
# a time and an address-space limit, so a crafted PDF neither hangs nor kills a server.
GROUNDING_PDF_MAX_BYTES = env_int("GROUNDING_PDF_MAX_BYTES", default=52_428_800)
GROUNDING_PDF_MAX_PAGES = env_int("GROUNDING_PDF_MAX_PAGES", default=2000)
GROUNDING_PDF_EXTRACT_SECONDS = env_int("GROUNDING_PDF_EXTRACT_SECONDS", default=30)
GROUNDING_PDF_EXTRACT_MEMORY_BYTES = env_int(
    "GROUNDING_PDF_EXTRACT_MEMORY_BYTES", default=1024 * 1024 * 1024
)

# Optional JSON-lines mirror of committed audit events (references only, no source text).
GROUNDING_AUDIT_LOG_PATH = env_str("GROUNDING_AUDIT_LOG_PATH", default="")

# The disposal journal (docs/architecture.md "Restoring from a backup"): every
# disposal is also appended (fsynced) to this JSON-lines file, on storage that outlives
# the database's host, so `manage.py reapply_disposals` can apply again the ones a
# restored database lacks; /readyz answers 503 ("disposals": "pending") until it has.
# Empty: no journal (local runs, tests).
GROUNDING_DISPOSAL_JOURNAL = env_str("GROUNDING_DISPOSAL_JOURNAL", default="")

# The transparency log (docs/transparency.md): every accepted write appends a leaf to
# its Dimension's signed Merkle log. The checkpoints' Ed25519 signing key (a base64
# 32-byte seed) is the trust root: required when DEBUG is off (`make run` writes one
# into .env; `manage.py log_signing_key` prints a new one).
GROUNDING_LOG_ENABLED = env_bool("GROUNDING_LOG_ENABLED", default=True)
GROUNDING_LOG_SIGNING_KEY = env_str("GROUNDING_LOG_SIGNING_KEY", default="").strip()
if GROUNDING_LOG_ENABLED and not GROUNDING_LOG_SIGNING_KEY and not DEBUG:
    raise ImproperlyConfigured(
        "GROUNDING_LOG_SIGNING_KEY is required when DJANGO_DEBUG is off (a base64 Ed25519 "
        "seed: `manage.py log_signing_key` prints one)."
    )
if GROUNDING_LOG_SIGNING_KEY:
    try:
        _seed = base64.b64decode(GROUNDING_LOG_SIGNING_KEY, validate=True)
    except ValueError:
        _seed = b""
    if len(_seed) != 32:
        raise ImproperlyConfigured(
            "GROUNDING_LOG_SIGNING_KEY must be a 32-byte Ed25519 seed in base64."
        )
# The host in the checkpoints' origin lines (<host>/grounding/<dimension>) and key name.
GROUNDING_LOG_HOST = env_str("GROUNDING_LOG_HOST", default="localhost")
# Who integrates leaves: "inline" (a thread of each app process, after each commit;
# the default with DEBUG on) or "service" (`manage.py run_sequencer`, docker-compose).
GROUNDING_LOG_SEQUENCER = env_str(
    "GROUNDING_LOG_SEQUENCER", default="inline" if DEBUG else "service"
)
if GROUNDING_LOG_SEQUENCER not in ("inline", "service"):
    raise ImproperlyConfigured("GROUNDING_LOG_SEQUENCER must be inline or service.")

# Throttle counters (common.web.throttling) are one store for every worker and server:
# Redis when REDIS_URL is set (INCR + EXPIRE), else the ThrottleCounter table on the
# primary. The default cache is the same Redis, else a database table that migrations
# create (policies/migrations/0003_cache_table.py).
REDIS_URL = env_str("REDIS_URL", default="")
CACHE_TABLE = "grounding_cache"
CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            # A Redis that does not answer fails the request, never hangs it.
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
        if REDIS_URL
        else {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": CACHE_TABLE,
            "OPTIONS": {"MAX_ENTRIES": 100_000},
        }
    )
    | {"KEY_PREFIX": env_str("GROUNDING_CACHE_KEY_PREFIX", default="grounding")}
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # DRF's TokenAuthentication, failures throttled per address (scope auth_failure).
        "common.web.throttling.ThrottledTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "common.web.openapi.AutoSchema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    # All bodies are JSON (docs/api.md); the parser enforces DATA_UPLOAD_MAX_MEMORY_SIZE (413).
    "DEFAULT_PARSER_CLASSES": ["common.web.parsers.LimitedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "common.web.errors.problem_exception_handler",
    # `format` is a query parameter of the projection (docs/api.md), not a renderer switch.
    "URL_FORMAT_OVERRIDE": None,
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.CursorPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_THROTTLE_CLASSES": ["common.web.throttling.ScopedUserRateThrottle"],
    # The client address for throttling: REMOTE_ADDR, or the X-Forwarded-For entry of the
    # outermost of this many trusted proxies in front (0: the header is ignored).
    "NUM_PROXIES": env_int("GROUNDING_TRUSTED_PROXIES", default=0),
    # Per user and scope, and failed token authentications per client address;
    # GROUNDING_THROTTLE_RATES="write=100/min,bulk=10/5m" overrides. Counted exactly, in
    # fixed windows of the rate's period (common.web.throttling).
    "DEFAULT_THROTTLE_RATES": {
        "read": "1200/min",
        "write": "300/min",
        "bulk": "30/min",
        "auth_failure": "20/min",
        **dict(
            item.split("=", 1)
            for item in env_list("GROUNDING_THROTTLE_RATES", default=[])
            if "=" in item
        ),
    },
}

# Idempotency keys (API.md "Retries and idempotency"; common.web.idempotency): the
# first answer to a write sent with an Idempotency-Key is kept this long for retries.
GROUNDING_IDEMPOTENCY_TTL_HOURS = env_int("GROUNDING_IDEMPOTENCY_TTL_HOURS", default=24)
# An API answer (status, problem code) its operation does not declare
# (common.web.operations.check_answer): logged as a warning, or, when true, raised
# (the test suite, so every answer a test provokes is proved declared).
GROUNDING_STRICT_ANSWERS = env_bool("GROUNDING_STRICT_ANSWERS", default=False)

# The event feed (API.md "Event feed", docs/events.md). Webhook receivers must be https
# and public unless GROUNDING_WEBHOOK_ALLOW_PRIVATE=1 (tests, local runs: http, private
# and loopback receivers allowed). Failed deliveries are retried after these many seconds
# (comma-separated; 9 retries after the first try by default); each try is cut after
# GROUNDING_WEBHOOK_TIMEOUT seconds.
GROUNDING_WEBHOOK_ALLOW_PRIVATE = env_bool("GROUNDING_WEBHOOK_ALLOW_PRIVATE", default=False)
GROUNDING_WEBHOOK_RETRY_SCHEDULE = [
    int(seconds)
    for seconds in env_list(
        "GROUNDING_WEBHOOK_RETRY_SCHEDULE",
        default=["5", "300", "1800", "7200", "18000", "36000", "50400", "72000", "86400"],
    )
]
GROUNDING_WEBHOOK_TIMEOUT = env_int("GROUNDING_WEBHOOK_TIMEOUT", default=15)
if GROUNDING_WEBHOOK_TIMEOUT < 1 or any(s < 0 for s in GROUNDING_WEBHOOK_RETRY_SCHEDULE):
    raise ImproperlyConfigured(
        "GROUNDING_WEBHOOK_TIMEOUT must be at least 1 and the retry schedule non-negative."
    )
# The event stream (GET /api/v1/events/ as text/event-stream): how often an open stream
# looks for new events, the comment line sent to keep an idle connection open, and how
# long one response lasts under WSGI (a thread each; the client resumes with
# Last-Event-ID). Under ASGI (grounding.project.asgi) a stream lasts until the client goes.
GROUNDING_STREAM_POLL_SECONDS = float(env_str("GROUNDING_STREAM_POLL_SECONDS", default="1"))
GROUNDING_STREAM_HEARTBEAT_SECONDS = env_int("GROUNDING_STREAM_HEARTBEAT_SECONDS", default=15)
GROUNDING_STREAM_WSGI_SECONDS = env_int("GROUNDING_STREAM_WSGI_SECONDS", default=25)
# GET /metrics (Prometheus): operators (superusers) only, or a scraper sending
# `Authorization: Bearer <GROUNDING_METRICS_TOKEN>`; GROUNDING_METRICS_PUBLIC=1 opens it.
GROUNDING_METRICS_PUBLIC = env_bool("GROUNDING_METRICS_PUBLIC", default=False)
GROUNDING_METRICS_TOKEN = env_str("GROUNDING_METRICS_TOKEN", default="")

# Client tokens (django-rest-knox rows; issued by `manage.py issue_token`): the
# header is `Authorization: Token <key>`, keys are stored as SHA-512 digests, and
# every token expires; a lifetime is not extended by use.
GROUNDING_TOKEN_TTL_DAYS = env_int("GROUNDING_TOKEN_TTL_DAYS", default=90)
REST_KNOX = {
    "AUTH_HEADER_PREFIX": "Token",
    "TOKEN_TTL": timedelta(days=GROUNDING_TOKEN_TTL_DAYS),
    "AUTO_REFRESH": False,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Grounding-link registry API",
    "DESCRIPTION": "WM-MEM-016 Answer Grounding: records, never judges. Errors are "
    "application/problem+json; mutations of an existing link name the revision they "
    'expect with `If-Match: "<revision>"` (or expected_revision in the body).',
    "VERSION": "1.0.0",
    # 3.1: Schema Objects are JSON Schema 2020-12, the dialect of the shipped schemas the
    # server validates with, and a nullable reference is one (3.0.3 cannot say that).
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    # common.web.openapi_strict: the description says exactly what the server does.
    # grounding.api.urls.MemberId: one path segment, described as the uuid it must be.
    "PATH_CONVERTER_OVERRIDES": {"member_id": {"type": "string", "format": "uuid"}},
    "POSTPROCESSING_HOOKS": [
        "common.web.openapi_strict.nullable_as_31",
        "common.web.openapi_strict.type_enums",
        "drf_spectacular.hooks.postprocess_schema_enums",
        "common.web.openapi.close_request_bodies",
        # grounding.api.openapi_citations: one from-citations body per `format`.
        "grounding.api.openapi_citations.from_citations_variants",
        "grounding.api.openapi_rules.cross_member_rules",
        "common.web.openapi_strict.enum_varnames",
        "common.web.openapi_strict.if_match_alternative",
        "common.web.openapi_strict.tagged_unions",
        "common.web.openapi_strict.storable_query",
        "common.web.openapi_strict.response_links",
        "common.web.openapi_strict.no_untyped_schemas",
    ],
    "ENUM_NAME_OVERRIDES": {
        "RecordStateEnum": "grounding.choices.RecordState",
        # A from-citations item of a disposed link: record_state is "disposed" alone.
        "DisposedRecordStateEnum": ["disposed"],
        "RecheckStateEnum": "grounding.choices.RecheckState",
        "DisplayStateEnum": "grounding.choices.DisplayState",
        "SupportKindEnum": "grounding.choices.SupportKind",
        "VerdictEnum": "grounding.choices.Verdict",
        "ResolutionStateEnum": "grounding.choices.ResolutionState",
        "MembershipRoleEnum": "grounding.choices.MembershipRole",
        "DisclosableFieldEnum": "policies.choices.DisclosableField",
        "AnchorStatusEnum": ["resolved", "ambiguous", "unresolved"],
        "EndpointRoleEnum": ["target", "body"],
        "CitationFormatEnum": "grounding.choices.CITATION_FORMATS",
        "EventTypeEnum": "feed.choices.EventType",
        "DeliveryStateEnum": "feed.choices.DeliveryState",
        "AttemptOutcomeEnum": "feed.choices.AttemptOutcome",
    },
}

# simple-history: history rows record who acted and why.
SIMPLE_HISTORY_HISTORY_CHANGE_REASON_USE_TEXT_FIELD = True
SIMPLE_HISTORY_REVERT_DISABLED = True

# Logs: JSON lines on stdout, each with the request id (grounding/project/logging.py).
# DJANGO_LOG_FORMAT=text gives plain lines for local reading.
LOG_LEVEL = env_str("DJANGO_LOG_LEVEL", default="INFO").upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": "grounding.project.logging.JsonFormatter"},
        "text": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
    },
    "handlers": {
        "stdout": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stdout",
            "formatter": env_str("DJANGO_LOG_FORMAT", default="json"),
        }
    },
    "root": {"handlers": ["stdout"], "level": LOG_LEVEL},
    "loggers": {
        # Django's own loggers propagate to the root handler instead of their defaults.
        "django": {"handlers": [], "level": LOG_LEVEL, "propagate": True},
        # Failures and lockouts (warnings, username and address masked), not axes' chatter.
        "axes": {"handlers": [], "level": "WARNING", "propagate": True},
    },
}
