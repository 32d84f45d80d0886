"""What the verifier reads: a log's leaves, by ranges of indexes, with their level-0
nodes, their audit events and (unless skipped) each commitment with the canonical
bytes of the row it names and the key it names (`chunk.Chunk`).

Every statement costs its range's work, whatever the planner's statistics. On
PostgreSQL (`read_pg`) results come in binary, and outside a transaction
(`manage.py verify_log`) READ_AHEAD connections of their own read the next ranges
while the walk hashes this one. Inside one (a test's), the caller's connection reads
them in turn: only it sees the transaction's rows. Any other database is read through
Django's cursor (`read_sqlite`). This module only cuts the log into ranges and picks
the reader, so the range size and the read-ahead are set in one place."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

from django.db import connections

from common.kernel import compat
from transparency.verifier import read_pg, read_sqlite
from transparency.verifier.chunk import Chunk

CHUNK = 2000  # indexes per range (2,000 read ahead better than 5,000 or 20,000)
# Connections reading ranges ahead of the walk (PostgreSQL, outside a transaction).
READ_AHEAD = 2


def chunks(log_id: int, using: str, commitments: bool, dimension: str) -> Iterator[Chunk]:
    """The log's leaves by index, CHUNK indexes at a time (`dimension`: the log's
    dimension's name, which its leaves name)."""
    connection = connections[using]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT max({connection.ops.quote_name('index')}) FROM transparency_leaf "
            "WHERE log_id = %s",
            [log_id],
        )
        last = cursor.fetchone()[0]
    if last is None:
        return
    ranges = [(low, low + CHUNK) for low in range(0, last + 1, CHUNK)]
    if connection.vendor != "postgresql":
        for low, high in ranges:
            yield read_sqlite.read_range(connection, log_id, low, high, commitments)
        return
    statement = read_pg.rows_statements(connection) if commitments else None
    if not _own_connections(connection) or len(ranges) < 2:
        pg = compat.driver_connection(connection)
        for low, high in ranges:
            with compat.database_errors(connection):
                yield read_pg.read_range(pg, log_id, low, high, statement, dimension)
        return
    yield from read_pg.read_ahead(connection, log_id, ranges, statement, READ_AHEAD, dimension)


@contextlib.contextmanager
def beside(using: str) -> Iterator[Callable]:
    """`later(fn, *args)`: a function returning `fn(*args)`. Where the walk reads ahead
    (PostgreSQL, outside a transaction), `fn` runs at once on a connection of its own
    (Django's, of its thread) while the walk goes on; elsewhere, on the caller's
    connection when its result is asked for (a transaction's rows are its own)."""
    if not _own_connections(connections[using]):
        yield lambda fn, *args: lambda: fn(*args)
        return

    def run(fn, *args):
        try:
            return fn(*args)
        finally:
            connections[using].close()  # this thread's own

    with ThreadPoolExecutor(2, thread_name_prefix="verify-log-beside") as pool:
        yield lambda fn, *args: pool.submit(run, fn, *args).result


def _own_connections(connection) -> bool:
    """Whether reads may go on connections of their own: PostgreSQL, outside a
    transaction (whose rows only its own connection sees), READ_AHEAD allowing."""
    return connection.vendor == "postgresql" and not connection.in_atomic_block and READ_AHEAD >= 2
