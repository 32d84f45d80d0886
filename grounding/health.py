"""Liveness and readiness probes.

- `/healthz`: the process is up and serving. Touches no database, so a database
  outage never makes an orchestrator restart healthy app servers.
- `/readyz`: this instance can serve traffic: the primary database answers,
  every migration on disk is applied, and the read replica (when configured)
  answers. Otherwise 503. The body names each check and its state only; no
  error text, host name or migration name is revealed.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

logger = logging.getLogger("grounding.health")

OK = "ok"
UNAVAILABLE = "unavailable"
PENDING = "pending"
REPLICA_ALIAS = "replica"


@never_cache
@require_safe
def healthz(request):
    return JsonResponse({"status": OK})


def _database_answers(alias: str) -> bool:
    try:
        with connections[alias].cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception:
        logger.warning("readiness: database %s does not answer", alias, exc_info=True)
        return False
    return True


def _migrations_applied(alias: str) -> bool:
    try:
        connection = connections[alias]
        executor = MigrationExecutor(connection)
        targets = executor.loader.graph.leaf_nodes()
        return not executor.migration_plan(targets)
    except Exception:
        logger.warning("readiness: cannot read the migration state", exc_info=True)
        return False


@never_cache
@require_safe
def readyz(request):
    checks: dict[str, str] = {}
    if _database_answers(DEFAULT_DB_ALIAS):
        checks["database"] = OK
        checks["migrations"] = OK if _migrations_applied(DEFAULT_DB_ALIAS) else PENDING
    else:
        checks["database"] = UNAVAILABLE
        checks["migrations"] = UNAVAILABLE
    if REPLICA_ALIAS in settings.DATABASES:
        checks["replica"] = OK if _database_answers(REPLICA_ALIAS) else UNAVAILABLE
    ready = all(state == OK for state in checks.values())
    return JsonResponse(
        {"status": OK if ready else UNAVAILABLE, "checks": checks},
        status=200 if ready else 503,
    )
