"""The read-replica router: reads to `replica` unless in a write transaction or a write
request; writes and migrations always on `default`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.conf import settings
from django.db import transaction
from django.http import HttpResponse
from django.test import RequestFactory

from grounding.project import db_router
from grounding.project.db_router import PrimaryForWritesMiddleware, ReplicaRouter, use_primary
from policies.models import AuditEvent


@pytest.fixture
def router(settings):
    # A configured replica as the router sees it: routing decisions only, no query
    # reaches it (the settings that add it are tested in a subprocess below).
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Overriding setting DATABASES")
        settings.DATABASES = {**settings.DATABASES, "replica": dict(settings.DATABASES["default"])}
    assert db_router.replica_configured()
    # The replica as its monitor last saw it: up and caught up.
    return ReplicaRouter(readable=lambda: True)


def _obj(alias):
    return SimpleNamespace(_state=SimpleNamespace(db=alias))


def test_reads_go_to_the_replica_outside_a_transaction(router):
    assert not transaction.get_connection("default").in_atomic_block
    assert router.db_for_read(AuditEvent) == "replica"


def test_throttle_counters_and_idempotency_keys_are_read_on_the_primary(router):
    assert not transaction.get_connection("default").in_atomic_block
    for label in ("policies.ThrottleCounter", "policies.IdempotencyKey"):
        assert router.db_for_read(apps.get_model(label)) == "default", label


@pytest.mark.django_db(transaction=True)
def test_reads_inside_a_transaction_on_the_primary_stay_on_the_primary(router):
    assert router.db_for_read(AuditEvent) == "replica"
    with transaction.atomic():
        assert router.db_for_read(AuditEvent) == "default"
    assert router.db_for_read(AuditEvent) == "replica"


def test_reads_fall_back_to_the_primary_while_the_replica_is_not_readable(router):
    router.readable = lambda: False  # down, or further behind than DATABASE_REPLICA_MAX_LAG
    assert not transaction.get_connection("default").in_atomic_block
    assert router.db_for_read(AuditEvent) == "default"


def test_writes_always_go_to_the_primary(router):
    assert router.db_for_write(AuditEvent) == "default"


def test_use_primary_pins_reads(router):
    with use_primary():
        assert router.db_for_read(AuditEvent) == "default"
    assert router.db_for_read(AuditEvent) == "replica"


def test_without_a_replica_everything_reads_from_the_primary():
    assert "replica" not in settings.DATABASES
    assert ReplicaRouter().db_for_read(AuditEvent) == "default"


@pytest.mark.parametrize(
    ("method", "expected"),
    [("get", "replica"), ("head", "replica"), ("post", "default"), ("patch", "default")],
)
def test_write_requests_read_from_the_primary(router, method, expected):
    seen = []

    def view(request):
        seen.append(router.db_for_read(AuditEvent))
        return HttpResponse()

    PrimaryForWritesMiddleware(view)(getattr(RequestFactory(), method)("/"))
    assert seen == [expected]
    assert router.db_for_read(AuditEvent) == "replica"


def test_relations_are_allowed_between_primary_and_replica(router):
    assert router.allow_relation(_obj("default"), _obj("replica")) is True
    assert router.allow_relation(_obj("replica"), _obj("replica")) is True
    assert router.allow_relation(_obj("default"), _obj("elsewhere")) is None


def test_migrations_run_only_on_the_primary(router):
    assert router.allow_migrate("default", "grounding") is True
    assert router.allow_migrate("replica", "grounding") is False


def test_settings_add_the_replica_only_when_configured():
    code = (
        "import json; from django.conf import settings as s; print(json.dumps({"
        "'aliases': sorted(s.DATABASES), 'test': s.DATABASES['replica']['TEST'], "
        "'name': s.DATABASES['replica']['NAME'], 'routers': s.DATABASE_ROUTERS, "
        "'pinned': 'grounding.project.db_router.PrimaryForWritesMiddleware' in s.MIDDLEWARE}))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env.update(
        DJANGO_SETTINGS_MODULE="grounding.project.settings",
        DJANGO_SECRET_KEY="test-only",
        DATABASE_REPLICA_URL="postgres://reader@replica.internal:5432/grounding",
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(settings.BASE_DIR),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "aliases": ["default", "replica"],
        "test": {"MIRROR": "default"},
        "name": "grounding",
        "routers": ["grounding.project.db_router.ReplicaRouter"],
        "pinned": True,
    }
    assert getattr(settings, "DATABASE_ROUTERS", []) == []


def _pooler_settings(**env: str) -> subprocess.CompletedProcess:
    code = (
        "import json; from django.conf import settings as s; print(json.dumps({a: ["
        "d['DISABLE_SERVER_SIDE_CURSORS'], d.get('OPTIONS', {}).get('prepare_threshold', 5)]"
        " for a, d in s.DATABASES.items()}))"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    clean.update(DJANGO_SETTINGS_MODULE="grounding.project.settings", DJANGO_SECRET_KEY="test-only")
    clean.update(env)
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(settings.BASE_DIR),
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_transaction_pooling_disables_what_outlives_a_transaction():
    result = _pooler_settings(
        DATABASE_URL="postgres://app@pgbouncer.internal:6432/grounding",
        DATABASE_REPLICA_URL="postgres://reader@replica.internal:5432/grounding",
        DATABASE_POOLER="Transaction",
    )
    assert result.returncode == 0, result.stderr
    # No WITH HOLD cursors, no prepared statements, on every alias.
    assert json.loads(result.stdout) == {"default": [True, None], "replica": [True, None]}


@pytest.mark.parametrize("pooler", ["", "session"])
def test_without_transaction_pooling_the_defaults_stay(pooler):
    result = _pooler_settings(
        DATABASE_URL="postgres://app@db.internal:5432/grounding", DATABASE_POOLER=pooler
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"default": [False, 5]}


def test_an_unknown_pooler_mode_is_refused():
    result = _pooler_settings(DATABASE_POOLER="statement")
    assert result.returncode != 0
    assert "DATABASE_POOLER must be unset, 'session' or 'transaction'" in result.stderr
