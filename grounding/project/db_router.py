"""Read-replica routing: reads may go to `replica`, everything that writes stays on `default`.

Installed only when `DATABASE_REPLICA_URL` is set (see settings). A read goes to
the replica unless

- it happens inside a transaction on the primary (`transaction.atomic()`), so
  the six operations read and write one consistent snapshot; or
- the current request is a write (any method but GET/HEAD/OPTIONS/TRACE), so a
  response never shows data older than the write it reports; or
- code asked for the primary explicitly with `use_primary()`; or
- the replica is down or lags more than `DATABASE_REPLICA_MAX_LAG` seconds, as its
  monitor last saw it (grounding/project/replica_health.py): reads fall back to the
  primary, and `/readyz` says the replica is `degraded`.

Writes and migrations always use `default`. The replica may lag: a client that
reads an ETag from the replica and then writes with `If-Match` is still safe,
because the revision guard runs on the primary (a stale revision gets 412).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, transaction

from common.kernel import compat
from grounding.project.replica_health import MONITOR

PRIMARY = DEFAULT_DB_ALIAS
REPLICA = "replica"
# The database cache's model (django.core.cache.backends.db).
CACHE_APP_LABEL = "django_cache"
# Rows read where they were just written: throttle counters (an UNLOGGED table, which a
# physical replica cannot read) and idempotency keys (a retry must find its first answer).
PRIMARY_ONLY = frozenset({"policies.throttlecounter", "policies.idempotencykey"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})

_pinned: ContextVar[bool] = ContextVar("database_pinned_to_primary", default=False)


@contextmanager
def use_primary() -> Iterator[None]:
    """Send every read in this block to the primary (read-your-writes)."""
    token = _pinned.set(True)
    try:
        yield
    finally:
        _pinned.reset(token)


def replica_configured() -> bool:
    return REPLICA in settings.DATABASES


class ReplicaRouter:
    def __init__(self, readable: Callable[[], bool] | None = None) -> None:
        # Whether the replica may be read now: its monitor's last answer, by default.
        self.readable = readable or MONITOR.readable

    def db_for_read(self, model, **hints) -> str:
        if not replica_configured() or _pinned.get():
            return PRIMARY
        if model._meta.app_label == CACHE_APP_LABEL or model._meta.label_lower in PRIMARY_ONLY:
            return PRIMARY
        if transaction.get_connection(PRIMARY).in_atomic_block:
            return PRIMARY
        return REPLICA if self.readable() else PRIMARY

    def db_for_write(self, model, **hints) -> str:
        return PRIMARY

    def allow_relation(self, obj1, obj2, **hints) -> bool | None:
        # Both aliases hold the same data (the replica mirrors the primary).
        if {compat.stored_on(obj1), compat.stored_on(obj2)} <= {PRIMARY, REPLICA}:
            return True
        return None

    def allow_migrate(self, db, app_label, model_name=None, **hints) -> bool:
        return db == PRIMARY


class PrimaryForWritesMiddleware:
    """Pin every read of a write request (POST, PUT, PATCH, DELETE, …) to the primary."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method in SAFE_METHODS:
            return self.get_response(request)
        with use_primary():
            return self.get_response(request)
