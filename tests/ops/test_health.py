"""/healthz (process up, no database) and /readyz (database answers, migrations applied)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db.migrations.loader import MigrationLoader

# "__all__": with DATABASE_REPLICA_URL set, /readyz also queries the replica.
pytestmark = [pytest.mark.urls("tests.ops.urls"), pytest.mark.django_db(databases="__all__")]


def test_healthz_is_ok_without_touching_the_database(client, db, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]


# The outage and the pending migration are real: a separate process whose database
# refuses connections, or whose schema is one migration behind.
_PROBE = """
import json, os, sys
import django
django.setup()
from django.core.management import call_command
if os.environ.get("UNAPPLY_TO"):
    call_command("migrate", verbosity=0)
    app, name = os.environ["UNAPPLY_TO"].split(":")
    call_command("migrate", app, name, verbosity=0)
from django.test import Client
client = Client()
print(json.dumps({p: [r.status_code, r.content.decode()] for p in sys.argv[1:]
                  for r in [client.get(p)]}))
"""


def _probe(database_url: str, *paths: str, unapply_to: str = "") -> dict[str, tuple[int, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="grounding.project.settings",
        DJANGO_SECRET_KEY="test-only-" + "x" * 40,
        DJANGO_ALLOWED_HOSTS="testserver",
        DATABASE_URL=database_url,
        UNAPPLY_TO=unapply_to,
    )
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, *paths],
        cwd=Path(settings.BASE_DIR),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    # Log lines (JSON too) go to stdout before it; the answer is the last line.
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    return {path: (status, body) for path, (status, body) in answer.items()}


# Nothing listens on port 1: connections are refused at once.
_DOWN = "postgres://grounding@127.0.0.1:1/grounding"


def test_healthz_answers_while_the_database_is_down():
    assert _probe(_DOWN, "/healthz")["/healthz"] == (200, '{"status": "ok"}')


def test_readyz_is_ok_on_a_migrated_database(client, settings):
    response = client.get("/readyz")
    assert response.status_code == 200, response.content
    expected = {"database": "ok", "migrations": "ok"}
    if "replica" in settings.DATABASES:  # a run with DATABASE_REPLICA_URL set
        expected["replica"] = "ok"
    assert response.json() == {"status": "ok", "checks": expected}


def test_readyz_is_unavailable_when_the_database_does_not_answer():
    status, content = _probe(_DOWN, "/readyz")["/readyz"]
    assert status == 503
    body = json.loads(content)
    assert body["status"] == "unavailable"
    assert body["checks"]["database"] == body["checks"]["migrations"] == "unavailable"
    assert "127.0.0.1" not in content and "refused" not in content


def test_readyz_is_unavailable_while_migrations_are_pending(tmp_path):
    latest = MigrationLoader(None, ignore_no_migrations=True).graph.leaf_nodes("grounding")[0]
    number = int(latest[1].split("_")[0])
    previous = next(
        name
        for app, name in MigrationLoader(None).graph.forwards_plan(latest)
        if app == "grounding" and int(name.split("_")[0]) == number - 1
    )
    database = f"sqlite:///{tmp_path / 'behind.sqlite3'}"
    status, content = _probe(database, "/readyz", unapply_to=f"grounding:{previous}")["/readyz"]
    assert status == 503
    body = json.loads(content)
    assert body["status"] == "unavailable"
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["migrations"] == "pending"
    assert latest[1] not in content


def test_probes_accept_only_safe_methods(client, db):
    assert client.post("/healthz").status_code == 405
    assert client.head("/readyz").status_code == 200


def test_probes_are_exempt_from_the_https_redirect(client, db, settings):
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 200
    assert client.get("/audited/").status_code == 301
