"""Several tables' new rows, and their history rows, in one statement.

A registration writes seven rows: two bindings, the link, their three history rows
and an audit event. Sent one INSERT each, the round trips were most of its time spent
waiting on the database. PostgreSQL runs data-modifying WITH queries as one statement:
each table's rows are inserted RETURNING what was stored, and its history rows are
selected from those, in the objects' order, as `bulk` selects them
from the table. The values sent are `bulk`'s (each field's `pre_save` and
`get_db_prep_save`), so the rows are those `bulk.insert_with_history` writes.

Batches large enough for COPY, models whose keys the database assigns and other
databases take `bulk`'s per-table paths.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import connections, models, router
from django.utils import timezone

from common.kernel import bulk, cursors, rows, written


@dataclass(frozen=True)
class Insert:
    """New objects of one model; `history`: one "+" history row each (a tracked model)."""

    model: type[models.Model]
    objs: Sequence[models.Model]
    history: bool = True


def insert_together(
    inserts: Sequence[Insert], *, user, change_reason: str, date: datetime | None = None
) -> None:
    """Write every `inserts` entry, in order, as `insert_with_history` (or `insert_rows`
    where `history` is false) would: in one statement when they are few."""
    inserts = [i for i in inserts if i.objs]
    if not inserts:
        return
    using = router.db_for_write(inserts[0].model)
    connection = connections[using]
    if not _together(connection, using, inserts):
        for item in inserts:
            if item.history:
                bulk.insert_with_history(
                    item.model, item.objs, user=user, change_reason=change_reason, date=date
                )
            else:
                bulk.insert_rows(item.model, item.objs)
        return
    when = date or timezone.now()
    shape = tuple((i.model, len(i.objs), i.history) for i in inserts)
    collect = written.collecting()
    statement, expected = _statement(using, shape, collect)
    history = bulk.history_values(when, user, change_reason)
    params: list = []
    for item in inserts:
        model = item.model
        _, values = rows.db_rows(model, item.objs, connection)
        params += [value for row in values for value in row]
        if item.history:
            params += bulk.history_params(model, history, connection)
            params.append([getattr(obj, model._meta.pk.attname) for obj in item.objs])
    with cursors.server_bound(connection) as cursor:
        cursor.execute(statement, params)
        answer = tuple(cursor.fetchone())
    counts = answer[: len(expected)]
    if counts != expected:
        raise RuntimeError(f"wrote {counts} rows where {expected} were due")
    for item in inserts:
        rows.mark_saved(item.objs, using)
    if collect:
        # The keys of the history rows, then of the rows without history, in order.
        keys = iter(answer[len(expected) :])
        for item in inserts:
            table = (bulk.history_model_of(item.model) if item.history else item.model)._meta
            written.note(using, table.db_table, next(keys) or [])


@functools.lru_cache(maxsize=256)
def _statement(
    using: str, shape: tuple[tuple[type[models.Model], int, bool], ...], keys: bool = False
) -> tuple[str, tuple[int, ...]]:
    """The statement for inserts of this shape (model, rows, history), and the row
    counts it must report: built once per shape, not per write. With `keys`, it also
    reports, per insert, the keys of the history rows written (of the rows themselves
    for an insert without history), for `written`."""
    connection = connections[using]
    quote = connection.ops.quote_name
    parts: list[str] = []
    counts: list[tuple[str, int]] = []
    collected: list[str] = []
    for n, (model, count, history) in enumerate(shape):
        fields = model._meta.concrete_fields
        columns = ", ".join(quote(f.column) for f in fields)
        values = ", ".join(["(" + ", ".join(["%s"] * len(fields)) + ")"] * count)
        parts.append(
            f"m{n} AS (INSERT INTO {quote(model._meta.db_table)} ({columns}) "
            f"VALUES {values} RETURNING *)"
        )
        counts.append((f"m{n}", count))
        if history:
            select = bulk.history_select(model, f"m{n}", connection)
            pk = quote(bulk.history_model_of(model)._meta.pk.column)
            parts.append(f"h{n} AS ({select} RETURNING {pk if keys else '1'})")
            counts.append((f"h{n}", count))
            collected.append(f"(SELECT array_agg({pk}) FROM h{n})")
        else:
            collected.append(f"(SELECT array_agg({quote(model._meta.pk.column)}) FROM m{n})")
    tally = ", ".join(f"(SELECT count(*) FROM {name})" for name, _ in counts)
    if keys:
        tally += ", " + ", ".join(collected)
    statement = f"WITH {', '.join(parts)} SELECT {tally}"
    return cursors.numbered(statement), tuple(c for _, c in counts)


def _together(connection, using: str, inserts: list[Insert]) -> bool:
    return (
        connection.vendor == "postgresql"
        and sum(len(i.objs) for i in inserts) < bulk.COPY_MIN_ROWS
        and all(router.db_for_write(i.model) == using for i in inserts)
        and all(bulk.direct_write(connection, i.model, i.objs) for i in inserts)
    )
