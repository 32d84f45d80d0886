"""New rows copied by the database from stored ones, with a few columns changed, and
their history rows.

A change notification rebinds every affected link to a new statement binding that
is its predecessor but for four columns. Built in Python, each new row was read in
full (its JSON decoded), rebuilt and sent back (its JSON encoded again); here the
database copies it: only the keys and the changed values cross the wire. The row is
what `bulk.insert_with_history` of the changed instance would write: every column
copied but the key (a new default), the changed ones and the `auto_now`/`auto_now_add`
ones (stamped with the write's time), and one "+" history row each.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import connections, models, router
from django.utils import timezone

from common.kernel import bulk, rows
from common.kernel.rows import new_instance


def copy_with_history(
    model: type[models.Model],
    sources: Sequence[Any],
    changes: dict[str, Sequence[Any] | Any],
    *,
    user,
    change_reason: str,
    date: datetime | None = None,
) -> list[Any]:
    """New rows of `model`, one per key in `sources`, each a copy of that row with
    `changes` (attname: one value per row as a list, or one value for all); returns
    their keys, in `sources` order.

    PostgreSQL: one INSERT … SELECT and the history rows copied from the new rows.
    Elsewhere: the sources read, copied as instances and inserted with history.
    """
    if not sources:
        return []
    using = router.db_for_write(model)
    connection = connections[using]
    when = date or timezone.now()
    per_row = {k: list(v) for k, v in changes.items() if isinstance(v, list | tuple)}
    if any(len(v) != len(sources) for v in per_row.values()):
        raise ValueError("a per-row change needs one value per source")
    if connection.vendor != "postgresql":
        return _copy_instances(model, sources, changes, per_row, user, change_reason, when)
    pk = model._meta.pk
    keys = [pk.get_default() for _ in sources]
    scalars = {k: v for k, v in changes.items() if k not in per_row}
    statement, order = _statement(model, using, tuple(per_row), tuple(scalars))
    fields = {f.attname: f for f in model._meta.concrete_fields}
    params: list[Any] = []
    for name in order:  # the SELECT list's parameters, in its order
        if name in scalars:
            params.append(rows.db_value(fields[name], scalars[name], connection))
        else:  # an auto_now column
            params.append(rows.db_value(fields[name], when, connection))
    params.append([rows.db_value(pk, key, connection) for key in sources])
    params.append([rows.db_value(pk, key, connection) for key in keys])
    for name, values in per_row.items():
        params.append([rows.db_value(fields[name], value, connection) for value in values])
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        if cursor.rowcount != len(sources):
            raise RuntimeError(f"copied {cursor.rowcount} rows of {len(sources)}")
    extra = bulk.history_values(when, user, change_reason)
    bulk.copy_history_of(connection, model, keys, extra)
    return keys


@functools.lru_cache(maxsize=64)
def _statement(
    model: type[models.Model], using: str, per_row: tuple[str, ...], scalars: tuple[str, ...]
) -> tuple[str, list[str]]:
    """The INSERT … SELECT, and the attnames of its scalar parameters in order (the
    changed values for all rows, then the write's time for each auto_now column)."""
    connection = connections[using]
    quote = connection.ops.quote_name
    pk = model._meta.pk
    select: list[str] = []
    order: list[str] = []
    for field in model._meta.concrete_fields:
        name = field.attname
        cast = "::jsonb" if bulk.is_json(field) else ""
        if field is pk:
            select.append("k.new")
        elif name in per_row:
            select.append(f"k.c{per_row.index(name)}{cast}")
        elif name in scalars:
            select.append(f"%s::{field.db_type(connection)}" if not cast else "%s::jsonb")
            order.append(name)
        elif getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            select.append(f"%s::{field.db_type(connection)}")
            order.append(name)
        else:
            select.append(f"s.{quote(field.column)}")
    fields = {f.attname: f for f in model._meta.concrete_fields}
    arrays = [f"%s::{pk.db_type(connection)}[]", f"%s::{pk.db_type(connection)}[]"]
    arrays += [f"%s::{bulk.array_type(fields[name], connection)}" for name in per_row]
    names = ", ".join(["src", "new", *(f"c{i}" for i in range(len(per_row))), "n"])
    columns = ", ".join(quote(f.column) for f in model._meta.concrete_fields)
    table = quote(model._meta.db_table)
    statement = (
        f"INSERT INTO {table} ({columns}) SELECT {', '.join(select)} "
        f"FROM unnest({', '.join(arrays)}) WITH ORDINALITY AS k({names}) "
        f"JOIN {table} s ON s.{quote(pk.column)} = k.src ORDER BY k.n"
    )
    return statement, order


def _copy_instances(model, sources, changes, per_row, user, change_reason, when) -> list[Any]:
    stored = model._default_manager.in_bulk(list(sources))
    skip = {model._meta.pk.attname}
    skip |= {
        f.attname
        for f in model._meta.concrete_fields
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)
    }
    copies = []
    for index, key in enumerate(sources):
        source = stored[key]
        values = {
            f.attname: getattr(source, f.attname)
            for f in model._meta.concrete_fields
            if f.attname not in skip
        }
        for name, value in changes.items():
            values[name] = per_row[name][index] if name in per_row else value
        copies.append(new_instance(model, values))
    bulk.insert_with_history(model, copies, user=user, change_reason=change_reason, date=when)
    return [obj.pk for obj in copies]
