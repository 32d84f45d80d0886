"""Rows read by one plain statement, as the instances a queryset would give.

The lookups every request makes (the token with its user, the user's memberships,
the profile, the disclosure decisions) are fixed statements. Compiling their
querysets was about two fifths of a registration's CPU, and a raw queryset, which
skips the compiler, still matches its columns to the model's fields by name on
every call (a tenth of a request). Here the statement names each model's columns
in field order (`columns`), and `read` turns each row into one instance per model
as `Model.from_db` does, with the converters a queryset applies to each field
(SQLite's datetimes are text until converted, JSON is text on both databases).

Row-level behaviour is Django's: `from_db` builds the instance (init signals
included) and marks it as loaded from `using`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections, models, router

from common.kernel import compat, cursors


@functools.cache
def columns(model: type[models.Model], alias: str) -> str:
    """The model's columns, in field order, qualified by the table alias `alias`: the
    SELECT list `read` expects for this model."""
    quote = connections[DEFAULT_DB_ALIAS].ops.quote_name
    return ", ".join(f"{alias}.{quote(f.column)}" for f in model._meta.concrete_fields)


def read(
    sql: str,
    params: Sequence[Any],
    models_read: Sequence[type[models.Model]],
    *,
    using: str | None = None,
    server_bound: bool = False,
) -> list[tuple[Any, ...]]:
    """Run `sql`, whose columns are `columns(model)` of each of `models_read` in turn,
    then any more; per row, one instance per model, then the further values as the
    driver gave them. A model whose primary key is NULL in a row (an outer join that
    found nothing) is None there. On the database the router reads the first model
    from, as a queryset of it would, unless `using` says (required with no model).

    `server_bound` (PostgreSQL): the values are bound by the server
    (`common.kernel.cursors`), for a statement sent often with many values or a
    long list (`= ANY(%s)` with a list is one array, where IN needs a value each).
    """
    using = using or router.db_for_read(models_read[0])
    connection = connections[using]
    plans = [_plan(model, using) for model in models_read]
    if server_bound:
        with cursors.server_bound(connection) as cursor:
            cursor.execute(cursors.numbered(sql), params)
            rows = cursor.fetchall()
    else:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    found = []
    for row in rows:
        start = 0
        read_row: list[Any] = []
        for model, (attnames, converting, pk_index) in zip(models_read, plans, strict=True):
            end = start + len(attnames)
            values = list(row[start:end])
            if values[pk_index] is None:
                read_row.append(None)
                start = end
                continue
            for index, converters in converting:
                value = values[index]
                for converter, expression in converters:
                    value = converter(value, expression, connection)
                values[index] = value
            read_row.append(model.from_db(using, attnames, values))
            start = end
        read_row.extend(row[start:])
        found.append(tuple(read_row))
    return found


@functools.cache
def _plan(model: type[models.Model], using: str):
    """The attnames in field order, (index, converters) of each field that has
    converters on this database (what a queryset's compiler would apply), and the
    primary key's index."""
    connection = connections[using]
    attnames = []
    converting = []
    for index, field in enumerate(model._meta.concrete_fields):
        attnames.append(field.attname)
        found, expression = compat.db_converters(field, model._meta.db_table, connection)
        if found:
            converting.append((index, tuple((c, expression) for c in found)))
    return attnames, converting, attnames.index(model._meta.pk.attname)
