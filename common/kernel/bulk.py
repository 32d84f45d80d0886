"""Inserts of new rows with their history rows: the write path of every service.

On PostgreSQL the rows are sent without Django's SQL compiler: COPY for batches
(bulk_create's UNNEST arrays are quoted by psycopg in Python, which was most of a
thousand-link write), one multi-row INSERT for a few rows (the compiler was a
third of a single registration's CPU). The history rows are then copied by the
database from the rows just written. Other databases use bulk_create.

Every path writes the values Django would (each field's `pre_save` and
`get_db_prep_save`), and history rows carry what simple-history's
`bulk_history_create` would put in them, so the result is what `save()` per row
would leave.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from datetime import datetime

from django.db import connections, models, router
from django.utils import timezone
from simple_history.utils import get_history_manager_for_model

from common.kernel import compat, rows, written

# Below this many rows one INSERT (one round trip) is cheaper than COPY (two).
COPY_MIN_ROWS = 16


def insert_rows(model: type[models.Model], objs: Sequence[models.Model]) -> None:
    """Insert new `objs` of one model in one statement."""
    if not objs:
        return
    using = router.db_for_write(model)
    connection = connections[using]
    if not direct_write(connection, model, objs):
        model._default_manager.using(using).bulk_create(objs)
        return
    fields, values = rows.db_rows(model, objs, connection)
    _send(connection, model, fields, values, len(objs))
    rows.mark_saved(objs, using)


def _history_write(model: type[models.Model], date: datetime | None):
    """Where a history-keeping write of `model` goes, and its time."""
    using = router.db_for_write(model)
    return using, connections[using], date or timezone.now()


def insert_with_history(
    model: type[models.Model],
    objs: Sequence[models.Model],
    *,
    user,
    change_reason: str,
    date: datetime | None = None,
) -> None:
    """Insert new tracked `objs` and one "+" history row each, as `save()` would."""
    if not objs:
        return
    using, connection, when = _history_write(model, date)
    if not direct_write(connection, model, objs):
        model._default_manager.using(using).bulk_create(objs)
        # simple-history's own bulk path, per-object overrides included.
        history = get_history_manager_for_model(model).bulk_history_create(
            objs,
            default_user=user if getattr(user, "pk", None) else None,
            default_change_reason=change_reason,
            default_date=when,
        )
        if written.collecting() and history:
            written.note(using, history[0]._meta.db_table, [h.pk for h in history])
        return
    fields, values = rows.db_rows(model, objs, connection)
    _send(connection, model, fields, values, len(objs))
    rows.mark_saved(objs, using)
    _copy_history(connection, model, objs, when, user, change_reason)


def update_with_history(
    model: type[models.Model],
    objs: Sequence[models.Model],
    fields: Sequence[str],
    *,
    user,
    change_reason: str,
    date: datetime | None = None,
) -> None:
    """Save changed `fields` (and auto_now ones) of existing tracked `objs`, with one "~"
    history row each, as `save()` per row would.

    On PostgreSQL: one UPDATE … FROM unnest(arrays) for the batch, then the history
    rows copied by the database from the rows just updated. Elsewhere: save() per row.
    The caller holds the rows' locks (SELECT … FOR UPDATE) in its transaction.
    """
    if not objs:
        return
    using, connection, when = _history_write(model, date)
    if connection.vendor != "postgresql":
        for obj in objs:
            compat.set_history_context(obj, user=user, reason=change_reason, date=when)
            obj.save(using=using)
        return
    meta = model._meta
    touched = [meta.get_field(name) for name in fields]
    touched += [
        f for f in meta.concrete_fields if getattr(f, "auto_now", False) and f not in touched
    ]
    pk = meta.pk
    quote = connection.ops.quote_name
    columns = [pk, *touched]
    arrays = [[rows.db_value(pk, getattr(obj, pk.attname), connection) for obj in objs]]
    for field in touched:
        convert = rows.converter(field)
        if rows.plain_pre_save(field):
            values = (getattr(obj, field.attname) for obj in objs)
        else:
            values = (field.pre_save(obj, False) for obj in objs)
        arrays.append([convert(value, connection) for value in values])
    casts = ", ".join(f"%s::{array_type(f, connection)}" for f in columns)
    names = ", ".join(f"c{i}" for i in range(len(columns)))
    sets = ", ".join(
        f"{quote(f.column)} = v.c{i + 1}{'::jsonb' if is_json(f) else ''}"
        for i, f in enumerate(touched)
    )
    statement = (
        f"UPDATE {quote(meta.db_table)} AS t SET {sets} "
        f"FROM unnest({casts}) AS v({names}) WHERE t.{quote(pk.column)} = v.c0"
    )
    with connection.cursor() as cursor:
        cursor.execute(statement, arrays)
        if cursor.rowcount != len(objs):
            raise RuntimeError(f"updated {cursor.rowcount} rows for {len(objs)} objects")
    _copy_history(connection, model, objs, when, user, change_reason, history_type="~")


def is_json(field: models.Field) -> bool:
    return field.get_internal_type() == "JSONField"


def array_type(field: models.Field, connection) -> str:
    # JSON travels as text (the converter's JSON text) and is cast per row.
    return "text[]" if is_json(field) else f"{field.db_type(connection)}[]"


def _copy_history(
    connection, model, objs, when, user, change_reason, history_type: str = "+"
) -> None:
    """History rows copied by the database from the rows just written, in `objs` order:
    they hold what was stored, and no value crosses the wire twice."""
    # No object of a direct batch carries its own history user, date or reason.
    extra = history_values(when, user, change_reason, history_type)
    pk = model._meta.pk.attname
    copy_history_of(connection, model, [getattr(obj, pk) for obj in objs], extra)


def history_values(when: datetime, user, change_reason: str, history_type: str = "+") -> dict:
    """The history columns (`HISTORY_COLUMNS`) of rows written by `user` at `when`."""
    return {
        "history_date": when,
        "history_user_id": getattr(user, "pk", None),
        "history_change_reason": change_reason,
        "history_type": history_type,
    }


def history_params(model, extra: dict, connection) -> list:
    """`history_values` as the parameters of `history_select`, in its order."""
    return [rows.db_value(f, extra[f.attname], connection) for f in _history_fields(model)]


def copy_history_of(connection, model, keys: Sequence, extra: dict) -> None:
    """The history rows of the rows `keys` names, copied by the database, in `keys`
    order, with these history columns (`history_values`)."""
    collect = written.collecting()
    statement = _history_statement(model, connection.alias, collect)
    with connection.cursor() as cursor:
        cursor.execute(statement, [*history_params(model, extra, connection), list(keys)])
        if cursor.rowcount != len(keys):
            raise RuntimeError(f"wrote {cursor.rowcount} history rows for {len(keys)} objects")
        if collect:
            # The transparency log commits to the history rows by their keys.
            history = history_model_of(model)._meta
            written.note(connection.alias, history.db_table, [r[0] for r in cursor.fetchall()])


@functools.cache
def _history_statement(model, alias: str, returning: bool = False) -> str:
    connection = connections[alias]
    statement = history_select(model, connection.ops.quote_name(model._meta.db_table), connection)
    if returning:
        pk = history_model_of(model)._meta.pk.column
        statement += f" RETURNING {connection.ops.quote_name(pk)}"
    return statement


def history_select(model: type[models.Model], source: str, connection) -> str:
    """The INSERT of the history rows of the rows of `source` (the model's table, or a
    WITH query's name) whose keys the last parameter lists, in its order; the history
    columns (`history_params`) are the parameters before it."""
    history_model = history_model_of(model)
    quote = connection.ops.quote_name
    tracked = [f.column for f in history_model.tracked_fields]
    extra_fields = _history_fields(model)
    columns = ", ".join(quote(c) for c in [*tracked, *(f.column for f in extra_fields)])
    pk = model._meta.pk
    return (
        f"INSERT INTO {quote(history_model._meta.db_table)} ({columns}) "
        f"SELECT {', '.join(f'm.{quote(c)}' for c in tracked)}, "
        f"{', '.join(['%s'] * len(extra_fields))} "
        f"FROM unnest(%s::{pk.db_type(connection)}[]) WITH ORDINALITY AS k(pk, n) "
        f"JOIN {source} m ON m.{quote(pk.column)} = k.pk ORDER BY k.n"
    )


@functools.cache
def _history_fields(model: type[models.Model]) -> list[models.Field]:
    history_fields = {f.attname: f for f in history_model_of(model)._meta.concrete_fields}
    return [history_fields[a] for a in HISTORY_COLUMNS]


@functools.cache
def history_model_of(model: type[models.Model]) -> type[models.Model]:
    # simple-history builds a new manager class on every `Model.history` access.
    return get_history_manager_for_model(model).model


def direct_write(connection, model: type[models.Model], objs: Sequence[models.Model]) -> bool:
    # The direct paths return no generated keys: a model whose key the database
    # assigns keeps bulk_create, which reads them back.
    return (
        connection.vendor == "postgresql"
        and getattr(objs[0], model._meta.pk.attname) is not None
        # Set on an instance when given (simple-history reads them with getattr).
        and not any(compat.carries_history_context(obj) for obj in objs)
    )


HISTORY_COLUMNS = ("history_date", "history_user_id", "history_change_reason", "history_type")


def _send(
    connection, model: type[models.Model], fields: list[models.Field], rows, count: int
) -> None:
    if count >= COPY_MIN_ROWS:
        _copy(connection, model, fields, rows, count)
        return
    rows = list(rows)
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    values = ", ".join(["(" + ", ".join(["%s"] * len(fields)) + ")"] * len(rows))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES {values}",
            [value for row in rows for value in row],
        )


def _copy(
    connection, model: type[models.Model], fields: list[models.Field], rows, count: int
) -> None:
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    statement = f"COPY {quote(model._meta.db_table)} ({columns}) FROM STDIN"
    connection.ensure_connection()
    started = time.monotonic()
    # The raw psycopg cursor skips Django's wrapper: its errors stay django.db ones
    # (a unique violation an IntegrityError) for the callers that catch them.
    with compat.driver_cursor(connection) as cursor, cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)
    # COPY bypasses Django's cursor wrapper; logged as the wrapper would log it so that
    # DEBUG query logs and query-count tests still see every statement.
    compat.log_statement(connection, f"{statement} -- {count} rows", time.monotonic() - started)
