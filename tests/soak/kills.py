"""The kill drill's killer: `pg_terminate_backend` on the app servers' backends while
they run an INSERT, a COPY or a COMMIT, found by polling `pg_stat_activity` (by
`application_name`, which each server sets to its name) from a superuser connection.

A COMMIT takes well under a millisecond with fsync off; for the drill the cluster
flushes and waits `commit_delay` before each commit's flush (`fsync = on`,
`commit_siblings = 0`, reloaded without a restart), so a COMMIT stays visible long
enough to be terminated while it runs: the one moment where the outcome is in
doubt, the commit durable and its answer lost.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import psycopg

# What is terminated, in turn: the kind and how pg_stat_activity shows it. Throttle
# counts are single autocommitted statements outside the write: not the target.
TARGETS = {
    "INSERT": "query LIKE 'INSERT INTO%%' AND query NOT LIKE '%%throttlecounter%%'",
    "COPY": "query LIKE 'COPY %%'",
    "COMMIT": "query = 'COMMIT'",
}
_FIND = (
    "SELECT pid, left(regexp_replace(query, '\\s+', ' ', 'g'), 60) FROM pg_stat_activity "
    "WHERE backend_type = 'client backend' AND datname = %s AND application_name = ANY(%s) "
    "AND state = 'active' AND {where} LIMIT 1"
)
SLOW_COMMITS = {"fsync": "on", "commit_delay": "20000", "commit_siblings": "0"}


def slow_commits(conn: psycopg.Connection, on: bool) -> None:
    for name, value in SLOW_COMMITS.items():
        if on:
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        else:
            conn.execute(f"ALTER SYSTEM RESET {name}")
    conn.execute("SELECT pg_reload_conf()")


@dataclass
class Killer:
    conn: psycopg.Connection
    database: str
    servers: list[str]
    pause: float = 0.25  # between kills: the load goes on between them
    kills: list[tuple[str, str]] = field(default_factory=list)  # (kind, query)
    misses: Counter = field(default_factory=Counter)
    stop: threading.Event = field(default_factory=threading.Event)

    def counts(self) -> dict[str, int]:
        counted = Counter(kind for kind, _ in self.kills)
        return {kind: counted.get(kind, 0) for kind in TARGETS}

    def run(self, budget: float = 2.0) -> None:
        """Terminate one backend of each kind in turn, trying each for `budget` s."""
        for kind in itertools.cycle(TARGETS):
            if self.stop.is_set():
                return
            find = _FIND.format(where=TARGETS[kind])
            deadline = time.monotonic() + budget
            while not self.stop.is_set() and time.monotonic() < deadline:
                row = self.conn.execute(find, (self.database, self.servers)).fetchone()
                if row is None:
                    time.sleep(0.001)
                    continue
                pid, query = row
                if self.conn.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0]:
                    self.kills.append((kind, query))
                    break
            else:
                self.misses[kind] += 1
            self.stop.wait(self.pause)


def in_commit(conn: psycopg.Connection, database: str, server: str, timeout: float) -> int | None:
    """The client port of a backend of `server` running COMMIT, within `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = conn.execute(
            "SELECT client_port FROM pg_stat_activity WHERE backend_type = 'client backend' "
            "AND datname = %s AND application_name = %s AND state = 'active' "
            "AND query = 'COMMIT' AND client_port IS NOT NULL LIMIT 1",
            (database, server),
        ).fetchone()
        if row is not None:
            return row[0]
        time.sleep(0.001)
    return None
