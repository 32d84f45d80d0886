"""The one place the project touches Django's, DRF's, drf-spectacular's, psycopg's and
django-simple-history's internals (private attributes, undocumented classes and
methods) for its fast paths.

Each internal has one small function here; its docstring names the behaviour relied
on; all were checked against the locked versions (Django 5.2.19, DRF 3.18.3,
drf-spectacular 0.30.0, django-simple-history 3.13.0, psycopg 3.3.9).
`tests/policies/test_compat.py` proves each one still behaves as relied on (on real
models and the real database), and `tests/ops/test_architecture.py` that no other
module of the project names these internals: an upgrade that changes one breaks one
named test and is mended here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from django.db import models

# --- Model instance state (django.db.models.base.ModelState) -------------------------


def related_cache(obj: models.Model) -> dict[str, Any]:
    """The instance's cache of related objects (`obj._state.fields_cache`), keyed by
    the relation's cache name (the field's name, Django ≥ 5.1): what a
    forward many-to-one or one-to-one descriptor reads before it queries. Reading,
    setting or popping a key is what `link.current_statement` access, assignment and
    `refresh_from_db` do."""
    return obj._state.fields_cache


def is_adding(obj: models.Model) -> bool:
    """Whether the instance has not been saved or loaded yet (`obj._state.adding`):
    True from `Model(...)`, False after `save()` or `from_db`."""
    return obj._state.adding


def stored_on(obj: models.Model) -> str | None:
    """The database alias the instance was read from or saved to (`obj._state.db`),
    None for a new one: where a replica read's related rows are read too."""
    return obj._state.db


def mark_stored(obj: models.Model, using: str) -> None:
    """Mark an instance written by a direct statement as `save()` would mark it: no
    longer adding, stored on `using`."""
    obj._state.adding = False
    obj._state.db = using


def bare_instance(
    model: type[models.Model],
    attrs: dict[str, Any],
    *,
    cached: dict[str, Any] | None = None,
    using: str | None = None,
) -> Any:
    """An instance of `model` whose `__dict__` is `attrs` and a fresh
    `django.db.models.base.ModelState` (related objects `cached`; stored on `using`
    when given, as `Model.from_db` leaves it), built without `Model.__init__`.

    Relies on a model instance being its field values by attname in `__dict__` plus
    `_state`, which is all `Model.__init__` and `from_db` leave (no pre/post_init
    listeners for the models built so: tests/policies/test_bulk_instances.py)."""
    state = models.base.ModelState()
    if cached:
        state.fields_cache.update(cached)
    if using is not None:
        state.adding = False
        state.db = using
    obj = model.__new__(model)
    obj.__dict__.update(attrs, _state=state)
    return obj


def forget_cached(field: models.Field, obj: models.Model) -> None:
    """Drop the instance's cached related object of `field` (FieldCacheMixin's
    `delete_cached_value`), as assigning a different key does."""
    field.delete_cached_value(obj)


def cache_related(relation: Any, obj: models.Model, value: Any) -> None:
    """Cache `value` as the instance's related object through `relation` (a field or a
    reverse relation, FieldCacheMixin's `set_cached_value`): a reverse one-to-one
    cached as None answers "none" without a query."""
    relation.set_cached_value(obj, value)


def prepare_related_for_save(obj: models.Model, related: Iterable[tuple]) -> None:
    """`Model._prepare_related_fields_for_save`, over the given relations only (each
    `(name, attname, target attname, field)`): a cached related object saved after it
    was assigned is assigned again (its key taken, the cache kept), a cached one whose
    key differs is dropped, and an unsaved one refuses the write with Django's message
    (its wording for bulk_create)."""
    cache = obj._state.fields_cache
    if not cache:
        return
    own = obj.__dict__
    for name, attname, target, field in related:
        other = cache.get(name)
        if other is None:
            continue
        if other.pk is None:
            raise ValueError(
                f"bulk_create() prohibited to prevent data loss due to unsaved related "
                f"object '{name}'."
            )
        if own.get(attname) in (None, ""):  # the key's empty values
            # Saved after it was assigned: assigned again, its key taken, its cache kept.
            setattr(obj, name, other)
        if getattr(other, target) != own.get(attname):
            field.delete_cached_value(obj)


# --- Model metadata -------------------------------------------------------------------


def private_fields(model: type[models.Model]) -> list:
    """The model's private fields (`_meta.private_fields`: generic foreign keys and
    the like), which the direct bulk writer does not handle."""
    return model._meta.private_fields


def db_converters(field: models.Field, table: str, connection) -> tuple[list[Callable], Any]:
    """The converters a queryset's compiler applies to `field`'s column read on
    `connection` from `table` (the backend's `ops.get_db_converters` on the field's
    column, then the field's own `get_db_converters`), and the column expression they
    are called with (`converter(value, expression, connection)`)."""
    expression = field.get_col(table)
    found = connection.ops.get_db_converters(expression) + field.get_db_converters(connection)
    return found, expression


# --- Database connections and cursors -------------------------------------------------


@contextlib.contextmanager
def server_bound_cursor(connection) -> Iterator:
    """A cursor of this PostgreSQL connection, wrapped as Django wraps its own (error
    translation, query logging, execute wrappers), over psycopg's `RawCursor`, which
    sends statements with `$n` placeholders and has the server bind the values.

    Relies on Django's cursor wrapper class taking `(cursor, connection)` and on
    `connection.connection` being the psycopg 3 connection."""
    with connection.cursor() as django_cursor:  # connected and checked as Django does
        import psycopg

        raw = psycopg.RawCursor(connection.connection)
        try:
            yield type(django_cursor)(raw, connection)
        finally:
            raw.close()


@contextlib.contextmanager
def driver_cursor(connection) -> Iterator:
    """A plain cursor of the database driver (psycopg's own, for COPY), its errors
    turned into django.db ones (a unique violation an IntegrityError) as Django's
    wrapper turns them (`connection.wrap_database_errors`)."""
    connection.ensure_connection()
    with connection.wrap_database_errors, connection.connection.cursor() as cursor:
        yield cursor


def is_connected(connection) -> bool:
    """Whether Django's connection holds an open driver connection (`connection.connection`)."""
    return connection.connection is not None


def driver_connection(connection) -> Any:
    """The driver's own connection under Django's (psycopg 3's `Connection` on
    PostgreSQL), connected first: for statements sent past Django's cursor wrapper."""
    connection.ensure_connection()
    return connection.connection


def database_errors(connection) -> contextlib.AbstractContextManager:
    """The context that turns the driver's errors into django.db's, as Django's cursor
    wrapper does (`connection.wrap_database_errors`)."""
    return connection.wrap_database_errors


def raw_cursor(pg) -> Any:
    """psycopg's `RawCursor` on a psycopg connection: `$n` placeholders bound by the
    server, no client-side query rewriting (psycopg ≥ 3.2)."""
    import psycopg

    return psycopg.RawCursor(pg)


def log_statement(connection, sql: str, seconds: float) -> None:
    """Log a statement sent past Django's cursor wrapper as the wrapper would (when it
    logs: DEBUG, or a test's CaptureQueriesContext), into `connection.queries_log`."""
    if connection.queries_logged:
        connection.queries_log.append({"sql": sql, "time": f"{seconds:.3f}"})


# --- django-simple-history --------------------------------------------------------------

# The instance attributes simple-history reads (getattr) when it writes the history
# row of a save: its user, date and change reason.
HISTORY_CONTEXT = ("_history_user", "_history_date", "_change_reason")

_UNSET: Any = object()


def set_history_context(
    obj: models.Model, *, user: Any = _UNSET, reason: Any = _UNSET, date: Any = _UNSET
) -> None:
    """Set who, why and when of the history row the next `save()` (or delete) of `obj`
    writes: simple-history reads `_history_user`, `_change_reason` and
    `_history_date` from the instance (django-simple-history 3.x)."""
    if user is not _UNSET:
        obj._history_user = user
    if reason is not _UNSET:
        obj._change_reason = reason
    if date is not _UNSET:
        obj._history_date = date


def carries_history_context(obj: models.Model) -> bool:
    """Whether `obj` holds any of simple-history's per-object overrides."""
    own = obj.__dict__
    return any(name in own for name in HISTORY_CONTEXT)


# --- DRF and drf-spectacular --------------------------------------------------------------


def is_unvalidated_field(field: Any) -> bool:
    """Whether a serializer field is DRF's `_UnvalidatedField`: the child a
    `ListField()` or `DictField()` declared without one takes (anything goes)."""
    from rest_framework.fields import _UnvalidatedField

    return type(field) is _UnvalidatedField


class CursorPositionHook:
    """Mixed into a `rest_framework.pagination.CursorPagination` (before it): DRF reads
    a page's boundary position with its private `_get_position_from_instance`, which
    this routes to the public `position_of` a subclass may override (DRF 3.x)."""

    def _get_position_from_instance(self, instance, ordering) -> str:
        return self.position_of(instance, ordering)

    def position_of(self, instance, ordering) -> str:
        """DRF's own position: the first ordering field's value as text."""
        return super()._get_position_from_instance(instance, ordering)


def serializer_schema(
    auto_schema: Any, serializer: Any, direction: str, *, bypass_extensions: bool = False
) -> dict[str, Any]:
    """drf-spectacular's schema of a serializer's fields (`AutoSchema._map_serializer`),
    for an extension that documents one serializer by another's fields (or, with
    `bypass_extensions`, by its own fields, the extension itself left out)."""
    return auto_schema._map_serializer(serializer, direction, bypass_extensions=bypass_extensions)


# --- Django admin --------------------------------------------------------------------------


def list_filter_registry() -> list[tuple[Callable[[Any], bool], type]]:
    """Django admin's `(test, filter class)` pairs (`FieldListFilter._field_list_filters`)
    that choose the filter class of a `list_filter` field entry, first match wins."""
    from django.contrib import admin

    return admin.FieldListFilter._field_list_filters
