"""Which rows the current transaction wrote: the transparency log commits to them.

Every accepted write appends one leaf to its Dimension's log committing to each
history row (and append-only record) it stored; the log's listener
(`policies.audit.on_applied`) runs inside the write's transaction after its rows,
and asks here what they were. The writers tell: the kernel's bulk writers
(`bulk`, `together`, `copies`) with the keys their statements return, and the
transparency app's signal receivers for the ORM's saves (simple-history's history
rows, append-only records).

Nothing is collected unless a consumer switched collection on (`enable`), so with
the log off the writers send the statements they always sent. Entries live on the
database connection (one per thread) and belong to its current transaction: the
first entry of a transaction registers a marker callback with `on_commit`; when the
marker is gone from the connection's list (the transaction committed, or rolled
back, or the savepoint that registered it did), the next entry starts afresh. An
entry of a savepoint rolled back later stays, naming a row that no longer exists:
the consumer selects the rows by key, so it matches nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connections

# Switched on by the consumer at start-up (the transparency log, when it is on).
_enabled = False


def enable(on: bool = True) -> None:
    global _enabled
    _enabled = on


def collecting() -> bool:
    """Whether the writers must tell what they wrote (read once per statement)."""
    return _enabled


class _Marker:
    """The on_commit callback that marks which transaction the entries belong to."""

    __slots__ = ()

    def __call__(self) -> None:  # runs after COMMIT: nothing left to do
        return None


def _entries(connection) -> dict[str, list]:
    state = getattr(connection, "_written_rows", None)
    if state is not None:
        marker, entries = state
        if connection.in_atomic_block and any(c[1] is marker for c in connection.run_on_commit):
            return entries
    entries: dict[str, list] = {}
    if connection.in_atomic_block:
        marker = _Marker()
        connection.on_commit(marker)
        connection._written_rows = (marker, entries)
    else:
        # Autocommit: nothing of ours writes outside a transaction; keep nothing.
        connection._written_rows = None
    return entries


def note(using: str, table: str, keys: Iterable) -> None:
    """Rows of `table` (its db_table) with these primary keys were written by the
    current transaction on `using`."""
    if not _enabled:
        return
    connection = connections[using]
    entries = _entries(connection)
    if connection.in_atomic_block:
        entries.setdefault(table, []).extend(keys)


def drain(using: str) -> dict[str, list]:
    """The rows noted in the current transaction since the last drain, by table
    (and forget them: the next write of the same transaction starts empty)."""
    connection = connections[using]
    state = getattr(connection, "_written_rows", None)
    if state is None:
        return {}
    entries = _entries(connection)
    taken = dict(entries)
    entries.clear()
    return taken


__all__ = ["collecting", "drain", "enable", "note"]
