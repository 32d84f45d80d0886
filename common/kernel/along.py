"""The rows an accepted write's listeners add to its transaction, sent as one statement.

`policies.audit` calls its listeners (the transparency log's queue, the event feed's
outbox) inside the write's transaction, after the write's own rows; each returns the
statements it needs (`Along`). On PostgreSQL they are sent together, as data-modifying
WITH queries of one statement: one cursor and one round trip whatever the number of
listeners (two statements were two of each on every write: docs/performance.md "The
outbox"). Elsewhere (SQLite) they are sent one after another. Either way they run in
the write's transaction: a rolled-back write leaves none of their rows.

The statements of one write must not depend on one another's rows: the queries of one
PostgreSQL statement share its snapshot, and none sees what another inserts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connections

from common.kernel import cursors

_WITH = "WITH "


@dataclass(frozen=True)
class Along:
    """One statement (psycopg's `%s` placeholders) and its values."""

    sql: str
    params: Sequence[Any]


def send(using: str, statements: Sequence[Along]) -> None:
    """Run `statements` in the current transaction of the `using` connection."""
    if not statements:
        return
    connection = connections[using]
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement.sql, statement.params)
        return
    for statement in combined(statements):
        with cursors.server_bound(connection) as cursor:
            cursor.execute(cursors.numbered(statement.sql), statement.params)


def combined(statements: Sequence[Along]) -> list[Along]:
    """`statements` as few PostgreSQL statements as the grammar allows: the plain ones
    (an INSERT, UPDATE or DELETE) become WITH queries of one that may have a WITH list
    of its own. A data-modifying WITH query must sit at the top level, so a second
    statement with a WITH list of its own is sent apart."""
    own_list = [s for s in statements if s.sql.startswith(_WITH)]
    plain = [s for s in statements if not s.sql.startswith(_WITH)]
    last = own_list[0] if own_list else plain.pop()
    if plain:
        queries = ", ".join(f"along_{n} AS ({s.sql})" for n, s in enumerate(plain))
        body = f"{queries}, {last.sql[len(_WITH) :]}" if own_list else f"{queries} {last.sql}"
        params = [value for s in plain for value in s.params] + list(last.params)
        last = Along(_WITH + body, params)
    return [last, *own_list[1:]]
