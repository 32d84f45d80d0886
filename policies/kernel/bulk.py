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
import json
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any, TypeVar

import orjson
from django.db import connections, models, router
from django.utils import timezone
from simple_history.utils import get_history_manager_for_model

# Below this many rows one INSERT (one round trip) is cheaper than COPY (two).
COPY_MIN_ROWS = 16

_M = TypeVar("_M", bound=models.Model)

# orjson hands these to `default` (none given: an error, then json.dumps decides).
_ORJSON_AS_JSON = (
    orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)

# Values of these Python types need no conversion for these fields: psycopg sends
# them as they are, so the generic (and, per value, costly) prep path is skipped.
_NATIVE: dict[str, tuple[type, ...]] = {
    "CharField": (str,),
    "TextField": (str,),
    "SlugField": (str,),
    "IntegerField": (int,),
    "BigIntegerField": (int,),
    "SmallIntegerField": (int,),
    "PositiveIntegerField": (int,),
    "PositiveBigIntegerField": (int,),
    "PositiveSmallIntegerField": (int,),
    "BooleanField": (bool,),
    "UUIDField": (uuid.UUID,),
    "ForeignKey": (int, uuid.UUID, str),
}


def new_instance(model: type[_M], values: dict[str, Any]) -> _M:
    """A new, unsaved `model` holding `values`, as `model(**values)` would build it.

    For the bulk paths, which build thousands: `Model.__init__` judges each keyword
    against every field (about 13 µs for a link; this takes 2). Values are given by
    field name or attname; a related object by field name is cached as its descriptor
    would cache it; every other field takes its default. No `pre_init`/`post_init` is
    sent: nothing in this project or its libraries listens to them for these models
    (`tests/policies/test_bulk_instances.py` holds that, and the equality with
    `Model(**values)`).
    """
    plan, names = _instance_plan(model)
    unknown = values.keys() - names
    if unknown:
        raise TypeError(f"{model.__name__} got unexpected fields: {sorted(unknown)}")
    obj = model.__new__(model)
    state = obj._state = models.base.ModelState()
    attrs = obj.__dict__
    for name, attname, field, related in plan:
        if attname in values:
            attrs[attname] = values[attname]
        elif name in values:
            value = values[name]
            if related:
                state.fields_cache[name] = value
                value = None if value is None else getattr(value, field.target_field.attname)
            attrs[attname] = value
        else:
            attrs[attname] = field.get_default()
    return obj


@functools.cache
def _instance_plan(model: type[models.Model]):
    plan = [
        (f.name, f.attname, f, f.is_relation and f.many_to_one) for f in model._meta.concrete_fields
    ]
    names = {f.name for f in model._meta.concrete_fields}
    names |= {f.attname for f in model._meta.concrete_fields}
    return plan, frozenset(names)


def insert_rows(model: type[models.Model], objs: Sequence[models.Model]) -> None:
    """Insert new `objs` of one model in one statement."""
    if not objs:
        return
    using = router.db_for_write(model)
    connection = connections[using]
    if not _direct(connection, model, objs):
        model._default_manager.using(using).bulk_create(objs)
        return
    fields, rows = _db_rows(model, objs, connection)
    _send(connection, model, fields, rows, len(objs))
    _mark_saved(objs, using)


def _history_write(model: type[models.Model], date: datetime | None):
    """Where a history-keeping write of `model` goes, its history model, and its time."""
    using = router.db_for_write(model)
    return using, connections[using], _history_model(model), date or timezone.now()


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
    using, connection, history_model, when = _history_write(model, date)
    if not _direct(connection, model, objs):
        model._default_manager.using(using).bulk_create(objs)
        # simple-history's own bulk path, per-object overrides included.
        get_history_manager_for_model(model).bulk_history_create(
            objs,
            default_user=user if getattr(user, "pk", None) else None,
            default_change_reason=change_reason,
            default_date=when,
        )
        return
    fields, rows = _db_rows(model, objs, connection)
    _send(connection, model, fields, rows, len(objs))
    _mark_saved(objs, using)
    _copy_history(connection, model, history_model, objs, when, user, change_reason)


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
    using, connection, history_model, when = _history_write(model, date)
    if connection.vendor != "postgresql":
        for obj in objs:
            obj._history_user = user
            obj._history_date = when
            obj._change_reason = change_reason
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
    arrays = [[_db_value(pk, getattr(obj, pk.attname), connection) for obj in objs]]
    for field in touched:
        convert = _converter(field)
        if type(field).pre_save is models.Field.pre_save:  # reads the attribute
            values = (getattr(obj, field.attname) for obj in objs)
        else:
            values = (field.pre_save(obj, False) for obj in objs)
        arrays.append([convert(value, connection) for value in values])
    casts = ", ".join(f"%s::{_array_type(f, connection)}" for f in columns)
    names = ", ".join(f"c{i}" for i in range(len(columns)))
    sets = ", ".join(
        f"{quote(f.column)} = v.c{i + 1}{'::jsonb' if _is_json(f) else ''}"
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
    _copy_history(
        connection, model, history_model, objs, when, user, change_reason, history_type="~"
    )


def _is_json(field: models.Field) -> bool:
    return field.get_internal_type() == "JSONField"


def _array_type(field: models.Field, connection) -> str:
    # JSON travels as text (the converter's JSON text) and is cast per row.
    return "text[]" if _is_json(field) else f"{field.db_type(connection)}[]"


def _copy_history(
    connection, model, history_model, objs, when, user, change_reason, history_type: str = "+"
) -> None:
    """History rows copied by the database from the rows just written, in `objs` order:
    they hold what was stored, and no value crosses the wire twice."""
    # No object of a direct batch carries its own history user, date or reason.
    extra = {
        "history_date": when,
        "history_user_id": getattr(user, "pk", None),
        "history_change_reason": change_reason,
        "history_type": history_type,
    }
    statement, extra_fields = _history_statement(model, history_model, connection.alias)
    params = [_db_value(f, extra[f.attname], connection) for f in extra_fields]
    pk = model._meta.pk.attname
    with connection.cursor() as cursor:
        cursor.execute(statement, [*params, [getattr(obj, pk) for obj in objs]])
        if cursor.rowcount != len(objs):
            raise RuntimeError(f"wrote {cursor.rowcount} history rows for {len(objs)} objects")


@functools.cache
def _history_statement(model, history_model, alias: str) -> tuple[str, list[models.Field]]:
    connection = connections[alias]
    quote = connection.ops.quote_name
    tracked = [f.column for f in history_model.tracked_fields]
    history_fields = {f.attname: f for f in history_model._meta.concrete_fields}
    extra_fields = [history_fields[a] for a in _HISTORY_COLUMNS]
    columns = ", ".join(quote(c) for c in [*tracked, *(f.column for f in extra_fields)])
    pk = model._meta.pk
    statement = (
        f"INSERT INTO {quote(history_model._meta.db_table)} ({columns}) "
        f"SELECT {', '.join(f'm.{quote(c)}' for c in tracked)}, "
        f"{', '.join(['%s'] * len(extra_fields))} "
        f"FROM unnest(%s::{pk.db_type(connection)}[]) WITH ORDINALITY AS k(pk, n) "
        f"JOIN {quote(model._meta.db_table)} m ON m.{quote(pk.column)} = k.pk ORDER BY k.n"
    )
    return statement, extra_fields


@functools.cache
def _history_model(model: type[models.Model]) -> type[models.Model]:
    # simple-history builds a new manager class on every `Model.history` access.
    return get_history_manager_for_model(model).model


def _direct(connection, model: type[models.Model], objs: Sequence[models.Model]) -> bool:
    # The direct paths return no generated keys: a model whose key the database
    # assigns keeps bulk_create, which reads them back.
    return (
        connection.vendor == "postgresql"
        and getattr(objs[0], model._meta.pk.attname) is not None
        and not any(hasattr(obj, a) for obj in objs for a in _PER_OBJECT_HISTORY)
    )


# simple-history's per-object overrides; a batch carrying them takes the ORM path.
_PER_OBJECT_HISTORY = ("_history_user", "_history_date", "_change_reason")


_HISTORY_COLUMNS = ("history_date", "history_user_id", "history_change_reason", "history_type")


def _db_value(field: models.Field, value: Any, connection) -> Any:
    return _converter(field)(value, connection)


@functools.cache
def _converter(field: models.Field) -> Callable[[Any, Any], Any]:
    """How one field's Python value becomes the value sent, decided once per field."""
    kind = field.get_internal_type()
    native = _NATIVE.get(kind, ())
    if kind == "JSONField":
        encoder = field.encoder

        def convert(value: Any, connection) -> Any:
            if value is None or hasattr(value, "as_sql"):
                return field.get_db_prep_save(value, connection)
            # JSON text for PostgreSQL to parse: the value Django's Jsonb adapter would
            # send (json.dumps), written by orjson where it can (a tenth of the time).
            # What orjson does not take as json.dumps would (a datetime, a subclass,
            # an integer past 64 bits, a custom encoder) takes json.dumps, and so does
            # any text with a null: orjson writes NaN and infinities as null, where
            # json.dumps writes what PostgreSQL refuses, as a save() would have it.
            if encoder is None:
                try:
                    text = orjson.dumps(value, option=_ORJSON_AS_JSON)
                except orjson.JSONEncodeError:
                    pass
                else:
                    if b"null" not in text:
                        return text.decode()
            return json.dumps(value, cls=encoder)

        return convert

    if kind == "DateTimeField":

        def convert(value: Any, connection) -> Any:
            # An aware datetime is what Django sends PostgreSQL unchanged; a naive one
            # takes Django's path, its warning and conversion included. (The direct
            # paths run on PostgreSQL only.)
            if value is None or (type(value) is datetime and value.tzinfo is not None):
                return value
            return field.get_db_prep_save(value, connection)

        return convert

    def convert(value: Any, connection) -> Any:
        if value is None or type(value) in native:
            return value
        return field.get_db_prep_save(value, connection)

    return convert


@functools.cache
def _read_plan(model: type[models.Model]) -> tuple[list[models.Field], list[tuple]]:
    # A field whose pre_save is Django's default just reads the attribute; only the
    # others (auto_now, auto_now_add) need calling per object.
    plan = []
    for field in model._meta.concrete_fields:
        plain = type(field).pre_save is models.Field.pre_save
        plan.append((field.attname, None if plain else field, _converter(field)))
    return list(model._meta.concrete_fields), plan


@functools.cache
def _related_fields(model: type[models.Model]) -> tuple[models.Field, ...]:
    if model._meta.private_fields:
        raise NotImplementedError(f"{model.__name__}: private fields take bulk_create")
    return tuple(f for f in model._meta.concrete_fields if f.is_relation)


def _prepare_related(obj: models.Model, related: tuple[models.Field, ...]) -> None:
    """`Model._prepare_related_fields_for_save`, over the model's relations only: a
    cached related object gives its key, and an unsaved one refuses the write."""
    cache = obj._state.fields_cache
    if not cache:
        return
    for field in related:
        other = cache.get(field.name)
        if other is None:
            continue
        if other.pk is None:
            raise ValueError(
                f"bulk_create() prohibited to prevent data loss due to unsaved related "
                f"object '{field.name}'."
            )
        if getattr(obj, field.attname) in (None, ""):  # the key's empty values
            setattr(obj, field.attname, other.pk)
        if getattr(other, field.target_field.attname) != getattr(obj, field.attname):
            field.delete_cached_value(obj)


def _db_rows(
    model: type[models.Model], objs: Sequence[models.Model], connection
) -> tuple[list[models.Field], Iterator[tuple]]:
    """The model's columns, and its rows as they are converted (lazily, so that COPY
    streams each row while the next is built and PostgreSQL works alongside)."""
    fields, plan = _read_plan(model)

    related = _related_fields(model)

    def rows() -> Iterator[tuple]:
        for obj in objs:
            _prepare_related(obj, related)
            values = obj.__dict__
            yield tuple(
                convert(values[attname] if field is None else field.pre_save(obj, True), connection)
                for attname, field, convert in plan
            )

    return fields, rows()


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
    # The raw psycopg cursor skips Django's wrapper: keep its errors django.db ones
    # (a unique violation an IntegrityError) for the callers that catch them.
    with (
        connection.wrap_database_errors,
        connection.connection.cursor() as cursor,
        cursor.copy(statement) as copy,
    ):
        for row in rows:
            copy.write_row(row)
    if connection.queries_logged:
        # COPY bypasses Django's cursor wrapper; log it as the wrapper would so that
        # DEBUG query logs and query-count tests still see every statement.
        connection.queries_log.append(
            {"sql": f"{statement} -- {count} rows", "time": f"{time.monotonic() - started:.3f}"}
        )


def _mark_saved(objs: Sequence[models.Model], using: str) -> None:
    for obj in objs:
        obj._state.adding = False
        obj._state.db = using
