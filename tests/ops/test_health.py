"""/healthz (process up, no database) and /readyz (database answers, migrations applied)."""

from __future__ import annotations

import json
from unittest import mock

import pytest
from django.db import OperationalError, connection
from django.db.migrations.executor import MigrationExecutor

# "__all__": with DATABASE_REPLICA_URL set, /readyz also queries the replica.
pytestmark = [pytest.mark.urls("tests.ops.urls"), pytest.mark.django_db(databases="__all__")]


def test_healthz_is_ok_without_touching_the_database(client, db, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]


def _database_down():
    error = OperationalError("could not connect to server at db-internal.example:5432")
    return mock.patch.object(connection, "cursor", side_effect=error)


def test_healthz_answers_while_the_database_is_down(client, db):
    with _database_down():
        assert client.get("/healthz").status_code == 200


def test_readyz_is_ok_on_a_migrated_database(client, settings):
    response = client.get("/readyz")
    assert response.status_code == 200, response.content
    expected = {"database": "ok", "migrations": "ok"}
    if "replica" in settings.DATABASES:  # a run with DATABASE_REPLICA_URL set
        expected["replica"] = "ok"
    assert response.json() == {"status": "ok", "checks": expected}


def test_readyz_is_unavailable_when_the_database_does_not_answer(client, db):
    with _database_down():
        response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["database"] == body["checks"]["migrations"] == "unavailable"
    assert b"db-internal" not in response.content


def test_readyz_is_unavailable_while_migrations_are_pending(client, db, monkeypatch):
    monkeypatch.setattr(
        MigrationExecutor,
        "migration_plan",
        lambda self, targets, clean_start=False: [("grounding", "9999_not_yet")],
    )
    response = client.get("/readyz")
    assert response.status_code == 503
    body = json.loads(response.content)
    assert body["status"] == "unavailable"
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["migrations"] == "pending"
    assert b"9999_not_yet" not in response.content


def test_probes_accept_only_safe_methods(client, db):
    assert client.post("/healthz").status_code == 405
    assert client.head("/readyz").status_code == 200


def test_probes_are_exempt_from_the_https_redirect(client, db, settings):
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 200
    assert client.get("/audited/").status_code == 301
