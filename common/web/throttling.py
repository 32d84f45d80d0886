"""Request rates: per user and scope (read, write, bulk), and failed authentication
per client address. Rates are read at request time.

DRF's own throttles copy the rates once at import; reading them on each request
lets settings (and GROUNDING_THROTTLE_RATES) change them without a restart. A rate is
DRF's `<n>/<period>` (`300/min`), and the period may carry a multiple (`10/5s`).

Counting is exact under concurrency (API.md "Retries and idempotency"): windows are
fixed, aligned on the rate's period (the window is floor(now / period)), and each
request adds one to the counter of (caller, scope, window) with one atomic statement
that returns the new count; the request is accepted when that count is within the
limit, else refused 429 with Retry-After = the seconds to the window's end. Every
worker and server counts into the same counter:

- in PostgreSQL (ThrottleCounter rows; `INSERT … ON CONFLICT DO UPDATE … RETURNING`),
  on the primary, in autocommit: DRF checks throttles and authenticates before a view
  opens its transaction (ATOMIC_REQUESTS is off), so the count is committed at once
  and holds no lock past its own statement. One plain statement, nothing kept on the
  connection: it works behind PgBouncer in transaction mode. Ended windows are
  deleted by the same statement, once a minute per process (SQLite: a second one);
- in Redis when REDIS_URL is set: INCR and EXPIRE in one MULTI.

Windows follow each server's clock; a skewed clock moves requests into a neighbouring
window, never past a window's limit.

The client address is REMOTE_ADDR, or the X-Forwarded-For entry added by the
outermost of GROUNDING_TRUSTED_PROXIES proxies (DRF's NUM_PROXIES): a client
cannot pick its own address by sending the header.
"""

from __future__ import annotations

import hashlib
import math
import re
import sqlite3
import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import connections, router
from rest_framework.exceptions import AuthenticationFailed, Throttled
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from policies.authentication import TokenAuthentication
from policies.models import ThrottleCounter

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
AUTH_FAILURE_SCOPE = "auth_failure"
# Ended windows are swept at most this often per process (seconds).
SWEEP_EVERY = 60.0
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([smhd])[a-z]*\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_IDENT_MAX = ThrottleCounter._meta.get_field("ident").max_length


def parse_rate(rate: str) -> tuple[int, int]:
    """(limit, period in seconds) of `300/min`, `20/5m`, `1000/hour`, …"""
    match = _RATE.match(rate)
    if match is None:
        raise ValueError(f"not a throttle rate: {rate!r} (e.g. 300/min, 10/5s)")
    limit, multiple, unit = match.groups()
    return int(limit), int(multiple or 1) * _SECONDS[unit]


@dataclass(frozen=True)
class Count:
    """A request counted: the window's count including it, and the window's end."""

    count: int
    window_end: int
    now: float

    def within(self, limit: int) -> bool:
        return self.count <= limit

    @property
    def retry_after(self) -> int:
        """Whole seconds to the window's end (at least 1, as Retry-After is rounded)."""
        return max(1, math.ceil(self.window_end - self.now))


# -- the counter


_last_sweep: dict[str, float] = {}
_redis_clients: dict[str, object] = {}
_redis_lock = threading.Lock()


def _sweep_due(alias: str, now: float) -> bool:
    # Racing threads may both sweep: harmless, the second deletes nothing.
    if now - _last_sweep.get(alias, 0.0) < SWEEP_EVERY:
        return False
    _last_sweep[alias] = now
    return True


def _ident(ident: str) -> str:
    # A proxy-given address longer than the column is stored as its digest.
    if len(ident) <= _IDENT_MAX:
        return ident
    return "sha256:" + hashlib.sha256(ident.encode()).hexdigest()[: _IDENT_MAX - 7]


def count_request(ident: str, scope: str, period: int, now: float | None = None) -> Count:
    """Add one request of `ident` in `scope` to the current window of `period` seconds
    (one atomic increment, shared by every worker and server) and return the new count."""
    now = time.time() if now is None else now
    window_end = (int(now // period) + 1) * period
    ident = _ident(ident)
    if getattr(settings, "REDIS_URL", ""):
        count = _redis_increment(ident, scope, window_end, period)
    else:
        count = _database_increment(ident, scope, window_end, now)
    return Count(count=count, window_end=window_end, now=now)


def _database_increment(ident: str, scope: str, window_end: int, now: float) -> int:
    alias = router.db_for_write(ThrottleCounter)  # the primary: counts are never replicated
    connection = connections[alias]
    table = connection.ops.quote_name(ThrottleCounter._meta.db_table)
    sweep = _sweep_due(alias, now)
    upsert = (
        f"INSERT INTO {table} (ident, scope, window_end, count) VALUES (%s, %s, %s, 1) "
        "ON CONFLICT (window_end, scope, ident) DO UPDATE "
        f"SET count = {table}.count + 1 RETURNING count"
    )
    params: list[object] = [ident, scope, window_end]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # The sweep rides in the same statement: no second round trip, and a
            # constant false when not due (the planner skips the DELETE).
            cursor.execute(
                f"WITH swept AS (DELETE FROM {table} WHERE %s AND window_end <= %s) {upsert}",
                [sweep, int(now), *params],
            )
            return cursor.fetchone()[0]
        if sweep:
            cursor.execute(f"DELETE FROM {table} WHERE window_end <= %s", [int(now)])
        if connection.vendor == "sqlite" and sqlite3.sqlite_version_info < (3, 35):
            return _update_or_insert(cursor, table, params)
        cursor.execute(upsert, params)
        return cursor.fetchone()[0]


def _update_or_insert(cursor, table: str, params: list[object]) -> int:
    """Before SQLite 3.35 (no RETURNING): UPDATE, else INSERT, each under SQLite's one
    writer; the read after the UPDATE sees the count it wrote."""
    cursor.execute(
        f"UPDATE {table} SET count = count + 1 WHERE ident = %s AND scope = %s AND window_end = %s",
        params,
    )
    if cursor.rowcount == 0:
        cursor.execute(
            f"INSERT INTO {table} (ident, scope, window_end, count) VALUES (%s, %s, %s, 1)",
            params,
        )
        return 1
    cursor.execute(
        f"SELECT count FROM {table} WHERE ident = %s AND scope = %s AND window_end = %s",
        params,
    )
    return cursor.fetchone()[0]


def redis_client(url: str):
    """One client (and connection pool) per Redis URL for the process."""
    with _redis_lock:
        client = _redis_clients.get(url)
        if client is None:
            import redis

            # A Redis that does not answer fails the request, never hangs it.
            client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
            _redis_clients[url] = client
        return client


def redis_key(ident: str, scope: str, window_end: int) -> str:
    prefix = settings.CACHES.get("default", {}).get("KEY_PREFIX", "")
    return f"{prefix}:throttle:{scope}:{ident}:{window_end}"


def _redis_increment(ident: str, scope: str, window_end: int, period: int) -> int:
    pipe = redis_client(settings.REDIS_URL).pipeline(transaction=True)
    key = redis_key(ident, scope, window_end)
    pipe.incr(key)
    # The key outlives its window by a period, whatever the servers' clocks say.
    pipe.expire(key, 2 * period)
    count, _ = pipe.execute()
    return int(count)


# -- DRF's throttle and authentication


class _CountedThrottle(BaseThrottle):
    scope: str = ""

    def _rate(self) -> tuple[int, int] | None:
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
        return None if rate is None else parse_rate(rate)

    def wait(self) -> int | None:
        counted = getattr(self, "counted", None)
        return counted.retry_after if counted else None


class ScopedUserRateThrottle(_CountedThrottle):
    """Scope from the view's `throttle_scope`, else `read` or `write` by method; per
    user, or per client address for an unauthenticated request."""

    def allow_request(self, request, view) -> bool:
        self.scope = getattr(view, "throttle_scope", None) or (
            "read" if request.method in SAFE_METHODS else "write"
        )
        rate = self._rate()
        if rate is None:
            return True
        limit, period = rate
        self.counted = count_request(self.get_cache_key(request, view), self.scope, period)
        return self.counted.within(limit)

    def get_cache_key(self, request, view=None) -> str:
        """The caller: `user:<id>`, else `ip:<address>`."""
        if request.user is not None and request.user.is_authenticated:
            return f"user:{request.user.pk}"
        return f"ip:{self.get_ident(request)}"


class FailedAuthenticationThrottle(_CountedThrottle):
    """Failed token authentications per client address (scope `auth_failure`).

    Only failures are counted and only failures are refused: a valid token costs no
    counter and is never locked out by someone else's guessing from the same
    address. (Tokens are 160 random bits; the limit bounds load, not guessability.)
    """

    scope = AUTH_FAILURE_SCOPE

    def get_cache_key(self, request, view=None) -> str:
        return f"ip:{self.get_ident(request)}"

    def count_failure(self, request) -> None:
        """Count this failure, or raise Throttled (429) when the address has none left."""
        rate = self._rate()
        if rate is None:
            return
        limit, period = rate
        self.counted = count_request(self.get_cache_key(request), self.scope, period)
        if not self.counted.within(limit):
            raise Throttled(wait=self.counted.retry_after)


class ThrottledTokenAuthentication(TokenAuthentication):
    """Token authentication (hashed keys: policies.authentication); a failure is
    401 until the address's failures are used up, then 429 with Retry-After."""

    def authenticate(self, request):
        try:
            return super().authenticate(request)
        except AuthenticationFailed:
            FailedAuthenticationThrottle().count_failure(request)
            raise
