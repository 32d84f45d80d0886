# The two commands: `make run` and `make test`. Everything else is set-up they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test lint ci clean bench bench-smoke lock prod-smoke soak ha-drill spec schemathesis

# Local runs: DEBUG on and human-readable log lines, unless the environment says otherwise.
LOCAL := DJANGO_DEBUG=$${DJANGO_DEBUG:-1} DJANGO_LOG_FORMAT=$${DJANGO_LOG_FORMAT:-text}

# Dependencies come from the hash-pinned lock (`make lock` refreshes it from
# pyproject.toml); the project itself is then installed without resolving again.
$(STAMP): pyproject.toml requirements-dev.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements-dev.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# Local defaults read by the settings (DEBUG, text logs, the demo password).
.env:
	cp .env.example .env

install: $(STAMP) .env

run: install
	@# The demo's transparency-log signing key (docs/transparency.md), made once into .env.
	@grep -q '^GROUNDING_LOG_SIGNING_KEY=' .env || echo "GROUNDING_LOG_SIGNING_KEY=$$($(BIN)/python -c 'import base64,os;print(base64.b64encode(os.urandom(32)).decode())')" >> .env
	$(LOCAL) $(BIN)/python manage.py migrate --noinput
	$(LOCAL) GROUNDING_DEMO_PASSWORD=$${GROUNDING_DEMO_PASSWORD:-demo-only-password} $(BIN)/python manage.py seed_demo
	$(LOCAL) $(BIN)/python manage.py runserver 127.0.0.1:8000

# Re-pin every dependency (with hashes) after changing pyproject.toml.
lock: install
	$(BIN)/python -m pip install --quiet 'pip-tools>=7.4,<8'
	$(BIN)/pip-compile --quiet --strip-extras --generate-hashes --allow-unsafe --no-emit-index-url --no-emit-find-links -o requirements.lock pyproject.toml
	$(BIN)/pip-compile --quiet --strip-extras --generate-hashes --allow-unsafe --no-emit-index-url --no-emit-find-links --extra dev -o requirements-dev.lock pyproject.toml

# The suite runs in parallel, one worker per core (pytest-xdist); each worker has its
# own test database (pytest-django suffixes its name with the worker's id).
# PYTEST_WORKERS=0 runs it in one process (a debugger, -x on the first failure);
# PYTEST_ARGS passes anything else to pytest (paths, -k, --durations=20).
# --dist worksteal: a worker that runs out of tests takes half of the other's queue, so
# a run does not end with one worker alone on its last long tests (the longest are also
# collected first: tests/conftest.py RUN_FIRST).
PYTEST_WORKERS ?= auto
test: install
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

# The committed OpenAPI description (spec.yaml): written from the code; the suite fails
# when it differs from what the server serves (tests/api/test_committed_schema.py).
spec: install
	DJANGO_SECRET_KEY=$${DJANGO_SECRET_KEY:-spec-only} $(BIN)/python manage.py spectacular --validate --file spec.yaml

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) db.sqlite3 test-artifacts

# Benchmarks (PostgreSQL only; not part of `make test`). Writes bench/results.json.
bench: install
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test} $(BIN)/python -m bench.run

# Every bench step at a tiny size (bench/smoke.py): proves `make bench` still runs (CI).
bench-smoke: install
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test} $(BIN)/python -m bench.smoke

# The production topology on loopback, from Debian's programs (apt-installs what is
# missing): PostgreSQL primary + streaming replica, PgBouncer (transaction mode), two
# gunicorn servers, nginx with TLS; runs the checks and stops it all (README "Operating
# the topology"). A few minutes at most; PROD_SMOKE_KEEP=1 keeps the scratch logs.
prod-smoke: install
	$(BIN)/python -m tests.prod_smoke

# The soak and kill drills of issue 27 against two gunicorn servers on a PostgreSQL
# cluster of their own (loopback, free ports): a mixed soak with keyed retries, backends
# terminated during INSERT, COPY and COMMIT, workers SIGKILLed during a COMMIT, 32
# writers on one revision, a throttle burst; fails on any broken invariant (README
# "Soak and kill drills"). About a minute and a half; SOAK_KEEP=1 keeps the logs.
soak: install
	$(BIN)/python -m tests.soak

# Issue 36's drills on real programs (apt-installs what is missing): etcd ×3, Patroni ×3
# (PostgreSQL 15, synchronous replication), HAProxy by Patroni's REST checks, PgBouncer,
# two gunicorn servers behind nginx (TLS), the sequencer, two delivery workers and a
# receiver, pgBackRest; a replica lost, the leader lost under load, both back
# (pg_rewind), a switchover, point-in-time restores (README "High availability and
# recovery"). Within 8 minutes; HA_KEEP=1 leaves it running and writes $$HA_STATE
# (default /tmp/grounding-ha/topology.json); HA_KEEP_LOGS=1 keeps the logs.
ha-drill: install
	$(BIN)/python -m tests.ha_drill

# schemathesis --checks all against gunicorn, once per role (curator, reviewer, steward,
# projection agent, access steward), every phase incl. stateful (OpenAPI links), a fixed
# number of examples, derandomized (tests/schemathesis_run). SCHEMATHESIS_EXAMPLES=10.
# A subset: SCHEMATHESIS_ROLES=curator SCHEMATHESIS_PATHS=from-citations (a regex over
# the paths) SCHEMATHESIS_PHASES=examples,coverage,fuzzing (or stateful).
# SCHEMATHESIS_PROFILE=ci (.ci/run): every role and phase, each role over only the
# operations it may perform; the rest of a full run (the same generated cases sent as
# roles the operation refuses: the same 400s, then 403s the suite already checks) is
# left out (tests/schemathesis_run/run.py says why). The default is the full run.
# SCHEMATHESIS_JOBS=2 (the default on its scratch SQLite file): two roles at once, each
# on its own copy of the seeded database and its own gunicorn (the st client is the
# busy process, one core each).
schemathesis: install
	$(BIN)/python -m tests.schemathesis_run
