"""Whether the read replica may serve reads now: up, and no further behind than
`DATABASE_REPLICA_MAX_LAG` seconds. Otherwise reads go to the primary (the router)
and `/readyz` says the replica is `degraded`, still 200: losing a replica costs
read capacity, never service.

One monitor per process probes the replica from a thread of its own every
`CHECK_INTERVAL` seconds, so no request ever probes (or waits for a dead replica's
connect timeout): the router only reads the last answer. An answer older than
`STALE_AFTER` (a probe stuck on a hung server) counts as down. Only the first read
of a process waits for the first probe (at most the replica's connect timeout).

Lag, measured on the replica:

- not in recovery (promoted, or a primary given as replica): nothing to lag, readable;
- receiving WAL and everything received is replayed: caught up, whatever the age of
  the last replayed commit (an idle primary sends no commits, so that age grows
  without any lag);
- otherwise (WAL received and not replayed, or no WAL receiver: its primary is gone)
  it is behind: by the age of its last replayed commit, but by no more than the
  time this monitor has seen it behind (that age says nothing about how long ago
  the primary, idle before, wrote what is not replayed yet).
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from dataclasses import dataclass

import psycopg
from django.conf import settings
from django.db import connections

logger = logging.getLogger("grounding.project.replica")

REPLICA = "replica"
CHECK_INTERVAL = 1.0  # seconds between probes
STALE_AFTER = 3 * CHECK_INTERVAL + 2  # an answer older than this is no answer

# The monitor's session is `<the replica URL's application_name>:replica-monitor`.
MONITOR_SUFFIX = "replica-monitor"

OK = "ok"
DOWN = "down"
LAGGING = "lagging"

PROBE_SQL = """
SELECT pg_is_in_recovery(),
       pg_last_wal_receive_lsn() IS NOT NULL
           AND pg_last_wal_replay_lsn() >= pg_last_wal_receive_lsn()
           AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver),
       EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())::float8
"""


@dataclass(frozen=True)
class ReplicaState:
    state: str  # OK, DOWN or LAGGING
    lag: float | None  # seconds behind, as judged (None: down)
    checked_at: float  # time.monotonic() of the probe


def judge(
    row: tuple[bool, bool, float | None],
    *,
    behind_since: float | None,
    now: float,
    max_lag: float,
) -> tuple[str, float, float | None]:
    """(state, lag, behind_since) from one probe's row (module docstring)."""
    in_recovery, caught_up, replay_age = row
    if not in_recovery or caught_up:
        return OK, 0.0, None
    since = now if behind_since is None else behind_since
    age = math.inf if replay_age is None else max(replay_age, 0.0)
    lag = min(age, now - since)
    return (OK if lag <= max_lag else LAGGING), lag, since


class ReplicaMonitor:
    """The replica's last probed state in this process (module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._first = threading.Event()
        self._last: ReplicaState | None = None
        self._behind_since: float | None = None
        self._conn: psycopg.Connection | None = None

    def readable(self) -> bool:
        state = self.state()
        return state is not None and state.state == OK

    def state(self, wait: float | None = None) -> ReplicaState | None:
        """The last fresh answer (None: none yet, or too old). The first call of a
        process waits for the first probe, at most `wait` seconds (by default the
        replica's connect timeout and a second)."""
        self._start()
        if not self._first.is_set():
            self._first.wait(self._connect_timeout() + 1 if wait is None else wait)
        state = self._last
        if state is None or time.monotonic() - state.checked_at > STALE_AFTER:
            return None
        return state

    def _connect_timeout(self) -> float:
        options = settings.DATABASES[REPLICA].get("OPTIONS") or {}
        return float(options.get("connect_timeout") or 2)

    def _start(self) -> None:
        if self._pid == os.getpid():
            return
        with self._lock:
            if self._pid == os.getpid():
                return
            # A forked worker starts its own (a thread does not survive a fork).
            self._first = threading.Event()
            self._last, self._behind_since, self._conn = None, None, None
            threading.Thread(target=self._run, name="replica-monitor", daemon=True).start()
            self._pid = os.getpid()

    def _run(self) -> None:
        previous = None
        while True:
            state = self.probe()
            # Each change is logged, and a replica found unreadable at start-up.
            if state.state != (previous or OK):
                log = logger.info if state.state == OK else logger.warning
                log("replica %s (was %s); lag %s s", state.state, previous or "unknown", state.lag)
            previous = state.state
            self._last = state
            self._first.set()
            time.sleep(CHECK_INTERVAL)

    def _connect(self) -> psycopg.Connection:
        # The monitor's own session, named apart from the requests' (an observer of
        # pg_stat_activity tells the probes from the reads), in autocommit.
        params = connections[REPLICA].get_connection_params()
        name = params.get("application_name") or "grounding"
        params["application_name"] = f"{name}:{MONITOR_SUFFIX}"[:63]
        # A host that vanishes mid-probe fails it within seconds, not TCP's minutes.
        params.setdefault("tcp_user_timeout", 5000)
        return psycopg.connect(**params, autocommit=True)

    def probe(self) -> ReplicaState:
        """Probe the replica once, on the monitor's own session."""
        now = time.monotonic()
        max_lag = float(settings.DATABASE_REPLICA_MAX_LAG)
        try:
            if self._conn is None or self._conn.closed:
                self._conn = self._connect()
            row = self._conn.execute(PROBE_SQL).fetchone()
        except Exception as exc:  # any failure is a replica not to read from
            logger.debug("replica probe failed: %s", exc)
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            self._behind_since = None
            return ReplicaState(DOWN, None, now)
        state, lag, self._behind_since = judge(
            row, behind_since=self._behind_since, now=now, max_lag=max_lag
        )
        return ReplicaState(state, lag, now)


MONITOR = ReplicaMonitor()
