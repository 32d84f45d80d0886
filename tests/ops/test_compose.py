"""docker-compose.yml is a valid Compose file with the deployment's expected shape.

No Docker engine runs here, so the file is checked against the Compose
Specification JSON Schema, vendored with its licence (tests/conformance/compose-spec/).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from jsonschema import Draft7Validator

PROJECT = Path(settings.BASE_DIR)
COMPOSE_FILE = PROJECT / "docker-compose.yml"
COMPOSE_SCHEMA = (
    Path(__file__).resolve().parent.parent / "conformance" / "compose-spec" / "compose-spec.json"
)


@pytest.fixture(scope="module")
def compose() -> dict:
    with COMPOSE_FILE.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads(COMPOSE_SCHEMA.read_text(encoding="utf-8"))


def _errors(schema: dict, document: dict) -> list[str]:
    validator = Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER)
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}"
        for error in validator.iter_errors(document)
    ]


def test_compose_file_validates_against_the_compose_specification(compose, schema):
    Draft7Validator.check_schema(schema)
    assert _errors(schema, compose) == []


def test_the_schema_check_would_catch_a_broken_file(compose, schema):
    broken = json.loads(json.dumps(compose))
    broken["services"]["web"]["depends_on"]["migrate"]["condition"] = "whenever"
    broken["services"]["db"]["healthcheck"]["retry"] = 10  # not a Compose key
    assert len(_errors(schema, broken)) >= 2


def test_services_are_the_always_on_ones_plus_the_optional_pooler_and_replica(compose):
    services = compose["services"]
    always = {name for name, service in services.items() if not service.get("profiles")}
    assert always == {"db", "redis", "migrate", "web", "sequencer", "stream", "deliver"}
    assert services["pgbouncer"]["profiles"] == ["pooler"]
    assert services["db-replica"]["profiles"] == ["replica"]


def test_every_web_server_counts_throttles_in_the_one_redis(compose):
    redis = compose["services"]["redis"]
    assert redis["image"].startswith("redis:")
    assert "ping" in redis["healthcheck"]["test"]
    web = compose["services"]["web"]
    assert web["depends_on"]["redis"] == {"condition": "service_healthy"}
    assert web["environment"]["REDIS_URL"] == "${REDIS_URL:-redis://redis:6379/0}"
    assert web["environment"]["GROUNDING_TRUSTED_PROXIES"].startswith("${GROUNDING_TRUSTED_")


def test_the_stream_is_served_by_uvicorn_and_webhooks_by_delivery_workers(compose):
    stream = compose["services"]["stream"]
    assert stream["command"][:2] == ["uvicorn", "grounding.project.asgi:application"]
    deliver = compose["services"]["deliver"]
    assert deliver["command"][:3] == ["python", "manage.py", "deliver_events"]
    for service in (stream, deliver):
        assert service["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        assert "${DJANGO_SECRET_KEY:?" in service["environment"]["DJANGO_SECRET_KEY"]


def test_migrate_has_no_statement_timeout_web_has_one(compose):
    assert compose["services"]["migrate"]["environment"]["DATABASE_STATEMENT_TIMEOUT"] == "0"
    web = compose["services"]["web"]["environment"]
    assert web["DATABASE_STATEMENT_TIMEOUT"] == "${DATABASE_STATEMENT_TIMEOUT:-30}"
    assert web["DATABASE_CONNECT_TIMEOUT"] == "${DATABASE_CONNECT_TIMEOUT:-3}"


def test_postgres_has_a_healthcheck_and_a_named_volume(compose):
    db = compose["services"]["db"]
    assert db["image"].startswith("postgres:")
    test = db["healthcheck"]["test"]
    assert "pg_isready" in " ".join(test if isinstance(test, list) else [test])
    volume_name, mount = db["volumes"][0].split(":", 1)
    assert mount.startswith("/var/lib/postgresql/data")
    assert volume_name in compose["volumes"], "the data volume must be a named volume"
    assert "${POSTGRES_PASSWORD:?" in db["environment"]["POSTGRES_PASSWORD"]


def test_migrate_runs_once_after_the_database_is_healthy(compose):
    migrate = compose["services"]["migrate"]
    assert migrate["command"][:3] == ["python", "manage.py", "migrate"]
    assert migrate["depends_on"] == {"db": {"condition": "service_healthy"}}
    assert migrate.get("restart") == "no"
    assert "build" in migrate


def test_web_runs_gunicorn_after_migrations_completed(compose):
    web = compose["services"]["web"]
    assert web["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
    assert web["depends_on"]["db"] == {"condition": "service_healthy"}
    command = web["command"]
    assert command[:2] == ["gunicorn", "grounding.project.wsgi"]
    options = dict(zip(command[2::2], command[3::2], strict=True))
    assert options["--workers"].startswith("${GUNICORN_WORKERS:-")
    assert options["--threads"].startswith("${GUNICORN_THREADS:-")
    assert options["--access-logfile"] == "-"
    assert options["--error-logfile"] == "-"
    assert "/healthz" in " ".join(web["healthcheck"]["test"])


def test_web_and_migrate_get_the_production_environment(compose):
    for name in ("migrate", "web"):
        env = compose["services"][name]["environment"]
        assert env["DJANGO_ENV"].startswith("${DJANGO_ENV:-production")
        assert "${DJANGO_SECRET_KEY:?" in env["DJANGO_SECRET_KEY"]
        assert env["DATABASE_URL"].startswith("postgres://")
        assert "DATABASE_REPLICA_URL" in env
        assert "DATABASE_POOLER" in env
    # Migrations always go to the primary itself; web may go through the pooler.
    migrate = compose["services"]["migrate"]["environment"]
    assert "@db:5432/" in migrate["DATABASE_URL"]
    assert migrate["DATABASE_POOLER"] == migrate["DATABASE_REPLICA_URL"] == ""
    web = compose["services"]["web"]["environment"]
    assert "@${DATABASE_HOST:-db}:${DATABASE_PORT:-5432}/" in web["DATABASE_URL"]
    assert web["DATABASE_POOLER"] == "${DATABASE_POOLER:-}"


def test_the_pooler_profile_is_debians_pgbouncer_in_transaction_mode(compose):
    pgbouncer = compose["services"]["pgbouncer"]
    dockerfile = pgbouncer["build"]["dockerfile_inline"]
    assert dockerfile.startswith("FROM debian:")
    assert "apt-get install -y --no-install-recommends pgbouncer" in dockerfile
    assert "USER nobody" in dockerfile
    ini = compose["configs"]["pgbouncer-ini"]["content"]
    assert "grounding = host=db port=5432 dbname=grounding" in ini
    assert "pool_mode = transaction" in ini
    assert "listen_port = 6432" in ini
    assert "${POSTGRES_PASSWORD:?" in compose["configs"]["pgbouncer-users"]["content"]
    assert {c["target"] for c in pgbouncer["configs"]} == {
        "/etc/pgbouncer/pgbouncer.ini",
        "/etc/pgbouncer/userlist.txt",
    }
    assert pgbouncer["depends_on"] == {"db": {"condition": "service_healthy"}}


def test_the_replica_profile_streams_from_db(compose):
    replica = compose["services"]["db-replica"]
    assert replica["image"] == compose["services"]["db"]["image"]
    script = replica["command"][-1]
    assert "pg_basebackup -h db -U grounding" in script
    assert " -R " in script  # standby.signal + primary_conninfo: a streaming replica
    assert script.strip().endswith("exec docker-entrypoint.sh postgres")
    volume = replica["volumes"][0].split(":", 1)[0]
    assert volume in compose["volumes"] and volume != "pgdata"
    assert "host replication grounding" in compose["configs"]["db-replication-hba"]["content"]
    db_configs = compose["services"]["db"]["configs"]
    assert db_configs[0]["target"].startswith("/docker-entrypoint-initdb.d/")


def test_web_waits_for_the_optional_parts_only_when_their_profile_is_on(compose):
    depends = compose["services"]["web"]["depends_on"]
    assert depends["pgbouncer"] == {"condition": "service_healthy", "required": False}
    assert depends["db-replica"] == {"condition": "service_healthy", "required": False}


def test_dockerfile_builds_a_non_root_gunicorn_image():
    dockerfile = (PROJECT / "Dockerfile").read_text(encoding="utf-8")
    lines = [line.strip() for line in dockerfile.splitlines()]
    assert next(line for line in lines if line.startswith("FROM")) == "FROM python:3.11-slim"
    # Locked dependencies first, then the project without resolving again.
    assert "RUN pip install --require-hashes -r requirements.lock" in lines
    assert "RUN pip install --no-deps ." in lines
    assert "collectstatic --noinput" in dockerfile
    user_lines = [line for line in lines if line.startswith("USER ")]
    assert user_lines and user_lines[-1] not in ("USER root", "USER 0")
    assert "gunicorn grounding.project.wsgi" in dockerfile
    assert (PROJECT / ".dockerignore").is_file()


def test_the_sequencer_runs_after_migrations_on_the_primary_with_the_signing_key(compose):
    sequencer = compose["services"]["sequencer"]
    assert sequencer["command"][:3] == ["python", "manage.py", "run_sequencer"]
    assert sequencer["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
    env = sequencer["environment"]
    assert "@db:5432/" in env["DATABASE_URL"]
    assert env["DATABASE_POOLER"] == env["DATABASE_REPLICA_URL"] == ""
    for name in ("web", "sequencer", "migrate"):
        env = compose["services"][name]["environment"]
        assert "${GROUNDING_LOG_SIGNING_KEY:?" in env["GROUNDING_LOG_SIGNING_KEY"]
        assert env["GROUNDING_LOG_SEQUENCER"] == "service"
