"""Liveness and readiness probes.

- `/healthz`: the process is up and serving. Touches no database, so a database
  outage never makes an orchestrator restart healthy app servers.
- `/readyz`: this instance can serve traffic: the primary database answers,
  every migration on disk is applied, and (with a disposal journal) every journaled
  disposal is in the database (`disposals`: `pending` after a restore until
  `reapply_disposals`). Otherwise 503. The read replica (when configured) is `ok`,
  or `degraded` when it is down or lags past DATABASE_REPLICA_MAX_LAG (its
  monitor's last answer, grounding/project/replica_health.py): reads then go to the
  primary, so the instance stays ready (200). The body names each check and its
  state only; no error text, host name or migration name is revealed. The checks
  run in a thread of their own on fresh connections, and the probe answers 503 when
  they have not finished within GROUNDING_READYZ_TIMEOUT_MS: a hung database never
  hangs it, and while one check is still waiting no second one is started (a probe
  arriving then shares its answer).
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from grounding.project import replica_health

logger = logging.getLogger("grounding.project.health")

OK = "ok"
UNAVAILABLE = "unavailable"
PENDING = "pending"
DEGRADED = "degraded"
REPLICA_ALIAS = "replica"
# Checks whose failure makes the instance unready (the replica's only degrades it).
REQUIRED = ("database", "migrations")


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


def _run_checks() -> dict[str, str]:
    checks: dict[str, str] = {}
    if _database_answers(DEFAULT_DB_ALIAS):
        checks["database"] = OK
        checks["migrations"] = OK if _migrations_applied(DEFAULT_DB_ALIAS) else PENDING
    else:
        checks["database"] = UNAVAILABLE
        checks["migrations"] = UNAVAILABLE
    if checks["database"] == OK:
        _disposals(checks)
    return checks


def _disposals(checks: dict[str, str]) -> None:
    """With a disposal journal: every disposal it holds is in the database ("pending"
    after a restore until `manage.py reapply_disposals` has run)."""
    from grounding.services.disposal_journal import readiness

    try:
        state = readiness()
    except Exception:
        logger.warning("readiness: cannot read the disposal journal", exc_info=True)
        state = UNAVAILABLE
    if state is not None:
        checks["disposals"] = state


class _Probe:
    """One run of the checks; every probe that arrives while it runs waits for it."""

    def __init__(self) -> None:
        self.result: dict[str, str] = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._work, name="readyz", daemon=True)

    def _work(self) -> None:
        try:
            self.result.update(_run_checks())
        finally:
            # This thread's own connections: the next probe connects afresh.
            connections.close_all()
            self.done.set()


_running_lock = threading.Lock()
_running: _Probe | None = None


def _checks_within(seconds: float) -> dict[str, str] | None:
    """The checks' states, or None when they did not finish in time. A probe that
    arrives while an earlier one's checks are still running waits for their answer
    rather than starting its own: a hung database holds one thread, never one per
    probe, and two probes at once (an orchestrator's and a load balancer's) both get
    the answer rather than one of them a 503 for arriving second."""
    global _running
    with _running_lock:
        probe = _running
        if probe is None or probe.done.is_set():
            probe = _running = _Probe()
            probe.thread.start()
    return dict(probe.result) if probe.done.wait(seconds) else None


@never_cache
@require_safe
def readyz(request):
    timeout = settings.GROUNDING_READYZ_TIMEOUT_MS / 1000
    started = time.monotonic()
    replica = REPLICA_ALIAS in settings.DATABASES
    if replica:
        replica_health.MONITOR.state(wait=0)  # its first probe runs alongside the checks
    checks = _checks_within(timeout)
    if checks is None:
        logger.warning("readiness: the database checks did not finish in time")
        checks = {"database": UNAVAILABLE, "migrations": UNAVAILABLE}
    if replica:
        left = max(0.0, timeout - (time.monotonic() - started))
        state = replica_health.MONITOR.state(wait=left)
        checks["replica"] = OK if state is not None and state.state == OK else DEGRADED
    ready = all(checks[name] == OK for name in REQUIRED) and checks.get("disposals", OK) == OK
    return JsonResponse(
        {"status": OK if ready else UNAVAILABLE, "checks": checks},
        status=200 if ready else 503,
    )
