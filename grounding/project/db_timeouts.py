"""Connection and statement timeouts for PostgreSQL, so a sick database fails fast.

A database that accepts TCP and never answers would otherwise hold a worker thread
forever (gunicorn's gthread timeout watches the worker's main loop, never a request
thread). `connect_timeout` is enforced by the client (psycopg); the `-c` options are
session settings the server enforces on every statement, lock wait and idle
transaction. A request that hits one gets `503 database_unavailable`
(common/web/errors.py). A timeout of 0 leaves that limit off.
"""

from __future__ import annotations

from typing import Any

POSTGRESQL_ENGINES = ("django.db.backends.postgresql",)

# SQLite's own wait (settings.py says why): writers take the lock at BEGIN and queue
# for it up to `timeout` seconds; WAL lets readers read meanwhile.
SQLITE_OPTIONS: dict[str, Any] = {
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
    "init_command": "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL",
}

# Session setting (server side) -> which keyword of `with_timeouts` gives its seconds.
_SERVER_SETTINGS = (
    ("statement_timeout", "statement"),
    ("lock_timeout", "lock"),
    ("idle_in_transaction_session_timeout", "idle_in_transaction"),
)


def with_timeouts(
    config: dict[str, Any], *, connect: int, statement: int, lock: int, idle_in_transaction: int
) -> dict[str, Any]:
    """`config` (one DATABASES entry) with the timeouts in its OPTIONS, in seconds.

    Non-PostgreSQL entries are returned unchanged. A connect_timeout or options
    already given in the URL or OPTIONS are kept; ours are appended to `options`.
    """
    if config.get("ENGINE") not in POSTGRESQL_ENGINES:
        return config
    seconds = {"statement": statement, "lock": lock, "idle_in_transaction": idle_in_transaction}
    options = dict(config.get("OPTIONS") or {})
    if connect > 0:
        options.setdefault("connect_timeout", connect)
    server = [
        f"-c {name}={seconds[key] * 1000}" for name, key in _SERVER_SETTINGS if seconds[key] > 0
    ]
    if server:
        options["options"] = " ".join(filter(None, [options.get("options", ""), *server]))
    return {**config, "OPTIONS": options}
