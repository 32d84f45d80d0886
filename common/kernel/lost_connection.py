"""A database that went away: how it is recognised, discarded and waited out.

Under Patroni a leader change drops every connection (the old leader's backends
are terminated, or its host is gone), and a connection that lands on a node just
demoted finds it read-only. None of that is the request's fault, nor a bug:

- `is_lost(exc)`: the error says the server is unreachable, shutting down,
  starting up, in recovery or read-only, or ended the session; the client may retry
  (common.web.errors answers it 503 `database_unavailable` with Retry-After).
- `discard_failed()`: the connections such an error came from are closed, so
  the next use connects afresh (through the router, to the current leader)
  instead of reusing a dead or read-only session; an open transaction on them
  is rolled back by the server when the session ends.
- `Backoff`: the long-running services (the sequencer, `deliver_events`) wait
  between reconnects, capped and jittered so a fleet does not reconnect in step.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from dataclasses import dataclass, field

from django.db import DatabaseError, InterfaceError, OperationalError, connections

from common.kernel import compat

logger = logging.getLogger("grounding.database")

# SQLSTATEs of a server that cannot serve this session (PostgreSQL appendix A):
# class 08 connection exception; 57P01 admin_shutdown, 57P02 crash_shutdown,
# 57P03 cannot_connect_now (starting up, in recovery), 57P04 database_dropped,
# 57P05 idle_session_timeout; 25006 read_only_sql_transaction (a write reached a
# node that is, or just became, a standby: a failover under the session); 25P03
# idle_in_transaction_session_timeout (a FATAL: the server ended the session and
# rolled its transaction back, as a terminated backend's).
LOST_CLASSES = ("08", "57P")
LOST_STATES = frozenset({"25006", "25P03"})


def sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of a database error (Django keeps the driver's error as its cause)."""
    for error in (exc, exc.__cause__):
        state = getattr(error, "sqlstate", None)
        if isinstance(state, str):
            return state
    return None


def is_lost(exc: BaseException) -> bool:
    """The database (not the request) failed: unreachable, timed out, going away, read-only."""
    if isinstance(exc, OperationalError | InterfaceError):
        return True
    if not isinstance(exc, DatabaseError):
        return False
    state = sqlstate(exc) or ""
    return state in LOST_STATES or state.startswith(LOST_CLASSES)


def discard_failed() -> list[str]:
    """Close this thread's server connections; the aliases closed.

    Called once a database error said the server is lost or read-only. Which alias
    failed is not told by the error, and Django's own `errors_occurred` mark is
    cleared by the rollback that follows it (and a read-only session passes the
    health check), so every open server session of the thread goes: a reconnect is
    cheap next to a request served by a dead session or a standby. SQLite files are
    no sessions of a server (and its "database is locked" is no loss): kept.
    """
    discarded = []
    for connection in connections.all(initialized_only=True):
        if connection.vendor == "sqlite" or not compat.is_connected(connection):
            continue
        _close(connection)
        discarded.append(connection.alias)
    return discarded


def close_all_quietly() -> None:
    """Close every connection of this thread, whatever state it is in."""
    for connection in connections.all(initialized_only=True):
        _close(connection)


def _close(connection) -> None:
    # Closing a dead socket may complain; Django forgets the connection either way.
    try:
        connection.close()
    except DatabaseError:
        logger.debug("closing a failed connection", exc_info=True)


@dataclass
class Backoff:
    """Exponential waits between reconnects: base·2ⁿ capped at `cap`, with full jitter
    in its upper half (so a restarted fleet spreads out but never spins)."""

    base: float = 0.5
    # A Patroni failover takes seconds to tens of seconds: retrying at most every 5 s
    # finds the new leader soon after it is up, at a few connects per process.
    cap: float = 5.0
    attempts: int = 0
    rng: random.Random = field(default_factory=random.Random, repr=False)

    def next_wait(self) -> float:
        ceiling = min(self.cap, self.base * (2**self.attempts))
        self.attempts += 1
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)

    def reset(self) -> None:
        self.attempts = 0


@dataclass
class Reconnecting:
    """A long-running loop's way through a lost database (the sequencer, each delivery
    worker thread): after a failed step its connections are discarded and it waits the
    next backoff before trying again (a new connection, to whichever server leads by
    then); each attempt and the reconnect are logged. Nothing else is carried over:
    the loops keep no session state (their advisory locks are transaction-scoped,
    taken again in each transaction; settings are SET LOCAL), so a new session
    serves them as the old one did."""

    what: str
    backoff: Backoff = field(default_factory=Backoff)
    down_since: float | None = None

    def failed(self, exc: BaseException, stop: threading.Event) -> None:
        close_all_quietly()
        if self.down_since is None:
            self.down_since = time.monotonic()
        wait = self.backoff.next_wait()
        if is_lost(exc):  # expected in a failover: one line, no traceback
            logger.warning(
                "%s: database connection lost (%s, sqlstate %s); reconnecting in %.1f s "
                "(attempt %d)",
                self.what,
                type(exc).__name__,
                sqlstate(exc),
                wait,
                self.backoff.attempts,
            )
        else:
            logger.error(
                "%s failed; retrying in %.1f s (attempt %d)",
                self.what,
                wait,
                self.backoff.attempts,
                exc_info=exc,
            )
        stop.wait(wait)

    def succeeded(self) -> None:
        if self.down_since is None:
            return
        logger.warning(
            "%s: reconnected after %.1f s and %d attempts",
            self.what,
            time.monotonic() - self.down_since,
            self.backoff.attempts,
        )
        self.down_since = None
        self.backoff.reset()
