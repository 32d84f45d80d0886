"""Rows as the database receives them, from model instances: the values Django would
send (each field's `pre_save` and `get_db_prep_save`), without its SQL compiler or
`Model.__init__`. The bulk writers (`bulk`, `together`) send them.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from django.conf import settings
from django.db import models

from common.kernel import compat
from common.kernel.canonical import json_text

_M = TypeVar("_M", bound=models.Model)

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
    against every field, several times the cost of this (docs/performance.md). Values are given by
    field name or attname; a related object by field name is cached as its descriptor
    would cache it; every other field takes its default, a constant one copied from
    the model's plan, a callable one called. No `pre_init`/`post_init` is sent:
    nothing in this project or its libraries listens to them for these models
    (`tests/policies/test_bulk_instances.py` holds that, and the equality with
    `Model(**values)`).
    """
    constants, keys, dynamic = _instance_plan(model)
    cached = {}
    attrs = dict(constants)
    for key, value in values.items():
        try:
            attname, cache_name, target = keys[key]
        except KeyError:
            unknown = sorted(set(values) - keys.keys())
            raise TypeError(f"{model.__name__} got unexpected fields: {unknown}") from None
        if cache_name is not None:
            cached[cache_name] = value
            value = None if value is None else getattr(value, target)
        attrs[attname] = value
    for attname, name, field in dynamic:
        if attname not in values and name not in values:
            attrs[attname] = field.get_default()
    return compat.bare_instance(model, attrs, cached=cached)


def stored_instance(
    model: type[_M], attnames: Sequence[str], values: Sequence[Any], using: str
) -> _M:
    """An instance of a row read from `using` with these fields, as `Model.from_db`
    builds it: the fields not read are deferred (absent, loaded on access)."""
    return compat.bare_instance(model, dict(zip(attnames, values, strict=True)), using=using)


@functools.cache
def _instance_plan(model: type[models.Model]):
    """The model's constant defaults by attname; each accepted key (name or attname)
    with the attname it sets and, for a relation given by name, the cache name and
    the related key's attname; and the fields whose default is called per instance."""
    constants: dict[str, Any] = {}
    keys: dict[str, tuple[str, str | None, str | None]] = {}
    dynamic: list[tuple[str, str, models.Field]] = []
    for field in model._meta.concrete_fields:
        related = field.is_relation and field.many_to_one
        keys[field.attname] = (field.attname, None, None)
        keys[field.name] = (
            (field.attname, field.name, field.target_field.attname)
            if related
            else (field.attname, None, None)
        )
        if (field.has_default() and callable(field.default)) or (related and field.has_default()):
            dynamic.append((field.attname, field.name, field))
        else:
            # No default (None, or "" for a string column) or a constant one: the value
            # get_default() returns every time, the same object as Django's.
            constants[field.attname] = field.get_default()
    return constants, keys, dynamic


def db_value(field: models.Field, value: Any, connection) -> Any:
    return converter(field)(value, connection)


@functools.cache
def converter(field: models.Field) -> Callable[[Any, Any], Any]:
    """How one field's Python value becomes the value sent, decided once per field."""
    kind = field.get_internal_type()
    native = _NATIVE.get(kind, ())
    if kind == "JSONField":
        encoder = field.encoder

        def convert(value: Any, connection) -> Any:
            if value is None or hasattr(value, "as_sql"):
                return field.get_db_prep_save(value, connection)
            # JSON text for PostgreSQL to parse: the value Django's Jsonb adapter would
            # send (json.dumps), written by orjson where the two agree (a tenth of the
            # time); NaN, for one, json.dumps writes as PostgreSQL refuses it, as a
            # save() would have it.
            text = json_text(value) if encoder is None else None
            if text is not None:
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


def plain_pre_save(field: models.Field) -> bool:
    """Whether the field's pre_save is Django's default, which reads the attribute."""
    return type(field).pre_save is models.Field.pre_save


# In a plan, for a DateTimeField stamped on insert (auto_now, auto_now_add) whose
# pre_save is Django's: the time is taken here, as that pre_save takes it.
_STAMPED = object()


def _stamped(field: models.Field) -> bool:
    return (
        isinstance(field, models.DateTimeField)
        and type(field).pre_save is models.DateTimeField.pre_save
        and bool(field.auto_now or field.auto_now_add)
    )


@functools.cache
def _read_plan(model: type[models.Model]) -> tuple[list[models.Field], list[tuple]]:
    """Per column: the attname; the field when its pre_save is not Django's default
    (called per object), or _STAMPED; its converter; and the types sent as they are
    (None: always convert, for JSON, whose None is not SQL NULL)."""
    plan = []
    for field in model._meta.concrete_fields:
        plain = plain_pre_save(field)
        kind = field.get_internal_type()
        native = None if kind == "JSONField" else _NATIVE.get(kind, ())
        special = None if plain else _STAMPED if _stamped(field) else field
        plan.append((field.attname, special, converter(field), native))
    return list(model._meta.concrete_fields), plan


@functools.cache
def _related_fields(model: type[models.Model]) -> tuple[tuple, ...]:
    if compat.private_fields(model):
        raise NotImplementedError(f"{model.__name__}: private fields take bulk_create")
    return tuple(
        (f.name, f.attname, f.target_field.attname, f)
        for f in model._meta.concrete_fields
        if f.is_relation
    )


def db_rows(
    model: type[models.Model], objs: Sequence[models.Model], connection
) -> tuple[list[models.Field], Iterator[list]]:
    """The model's columns, and its rows as they are converted (lazily, so that COPY
    streams each row while the next is built and PostgreSQL works alongside)."""
    fields, plan = _read_plan(model)
    related = _related_fields(model)
    # timezone.now(), with settings read once per batch instead of once per value.
    zone = UTC if settings.USE_TZ else None

    def rows() -> Iterator[list]:
        for obj in objs:
            compat.prepare_related_for_save(obj, related)
            values = obj.__dict__
            row = []
            for attname, field, convert, native in plan:
                if field is None:
                    value = values[attname]
                elif field is _STAMPED:
                    value = values[attname] = datetime.now(zone)
                else:
                    value = field.pre_save(obj, True)
                # Most values go as they are: the converter is called for the rest.
                if native is not None and (value is None or type(value) in native):
                    row.append(value)
                else:
                    row.append(convert(value, connection))
            yield row

    return fields, rows()


def mark_saved(objs: Sequence[models.Model], using: str) -> None:
    for obj in objs:
        compat.mark_stored(obj, using)
