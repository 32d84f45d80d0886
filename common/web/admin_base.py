"""Shared admin building blocks for every app (policies is the bottom layer).

`DisclosedAdmin` is what makes the admin answer a user as the API would (API.md
"Admin"), declared once per ModelAdmin:

- `reveals` names, for each lookup path the admin searches, filters, drills down or
  sorts on, what its value reveals: `ANY` (every reader of the row sees it) or a
  token the admin's `disclosed_q` turns into the rows where this reader sees it (a
  disclosable group of the reader's disclosure decisions, "shown while not
  disposed", a notification's subject). Search terms, list filters and date
  drill-downs then select a row only on values disclosed to that reader for that
  row; sorting is offered only on `ANY` paths; facets (counts per choice) are off.
- Only the URL lookups the declared list filters and date hierarchy produce (and
  `extra_lookups`) are accepted; any other is refused (400, Django's
  DisallowedModelAdminLookup), so no URL selects on an undeclared value.
- History pages are the changelist's rows only (404 otherwise), their diffs shown
  through `history_value`, their actors only where `history_names_users` says; there
  is no history revert form (404 on GET and POST).
- `check()` refuses an admin whose search fields, filters or date hierarchy are not
  declared, or whose filter lists choices from rows the reader may not see.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping
from typing import Any, ClassVar

from django.contrib import admin
from django.contrib.admin.utils import (
    NotRelationField,
    get_fields_from_path,
    lookup_spawns_duplicates,
    unquote,
)
from django.contrib.admin.views.main import ChangeList
from django.core import checks
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db.models import Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import re_path
from django.utils.text import capfirst, smart_split, unescape_string_literal

from common.kernel import compat
from policies.models import Dimension, Profile
from policies.reader import reader_for

ANY = ""  # a value every reader of the row sees
WITHHELD = "withheld"
HISTORY_TEMPLATE = "admin/registry/object_history.html"
HISTORY_ROWS = 200


def holds(request: HttpRequest, *roles: str, dimension_id: int | None = None) -> bool:
    """Active staff holding one of `roles` (any role if none given), in one Dimension or
    any: the one role check of every admin (the reader's roles, cached per request)."""
    if not (request.user.is_active and request.user.is_staff):
        return False
    return reader_for(request).holds(*roles, dimension_id=dimension_id)


class ReadOnlyAdminMixin:
    """No add, change or delete from the admin: these rows change only through the
    services (or never, for append-only records)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


def search_path(name: str) -> str:
    """The lookup path a search field searches ("=grounding_id" -> "grounding_id")."""
    return name.lstrip("^=@")


def _search_lookup(name: str) -> str:
    # Django's own prefixes (ModelAdmin.get_search_results).
    prefixes = {"^": "istartswith", "=": "iexact", "@": "search"}
    if name[:1] in prefixes:
        return f"{name[1:]}__{prefixes[name[0]]}"
    return f"{name}__icontains"


def shown(value: Any) -> str:
    return "—" if value in (None, "", [], {}) else str(value)


class ScopedRelatedFilter(admin.RelatedFieldListFilter):
    """A relation filter listing only the related rows the admin says the reader's rows
    may name (`choices_for`), never every row of the related table."""

    def field_choices(self, field, request: HttpRequest, model_admin) -> list[tuple[Any, str]]:
        return [(row.pk, str(row)) for row in model_admin.choices_for(request, field)]


class DimensionListFilter(ScopedRelatedFilter):
    """By Dimension: only the reader's Dimensions (`DisclosedAdmin.filter_dimensions`)."""


class ProfileListFilter(ScopedRelatedFilter):
    """By profile: the shared profiles and the reader's Dimensions' own."""


class DisclosedChangeList(ChangeList):
    """The changelist whose filters and date drill-down select only on disclosed values
    and which sorts only on values every reader of a row sees."""

    def get_queryset(self, request: HttpRequest, exclude_parameters=None) -> QuerySet:
        queryset = super().get_queryset(request, exclude_parameters)
        declared = self.model_admin.declared_lookups(request)
        used = {declared[name] for name in self.get_filters_params() if name in declared}
        for reveal in sorted(used - {ANY}):
            queryset = queryset.filter(self.model_admin.disclosed_q(request, reveal))
        return queryset

    def get_ordering_field(self, field_name):
        order = super().get_ordering_field(field_name)
        return order if self.model_admin.sorts_on(order) else None


class DisclosedAdmin(admin.ModelAdmin):
    """A ModelAdmin whose lookups, sorting and history obey the reader (module doc)."""

    reveals: ClassVar[Mapping[str, str]] = {}
    # URL lookups accepted beyond the list filters' (parameter -> what it reveals).
    extra_lookups: ClassVar[Mapping[str, str]] = {}
    # The reveal tokens `disclosed_q` understands besides ANY.
    known_reveals: ClassVar[frozenset[str]] = frozenset()
    show_facets = admin.ShowFacets.NEVER

    # -- the rows a value is disclosed on

    def disclosed_q(self, request: HttpRequest, reveal: str) -> Q:
        """Rows of this admin whose value of kind `reveal` the reader may see."""
        if reveal == ANY:
            return Q()
        raise NotImplementedError(f"{type(self).__name__} does not disclose {reveal!r}")

    def filter_dimensions(self, request: HttpRequest) -> list[Dimension]:
        """The Dimensions a Dimension filter lists: the reader's."""
        return list(reader_for(request).dimensions())

    def filter_profiles(self, request: HttpRequest) -> QuerySet[Profile]:
        mine = [d.pk for d in self.filter_dimensions(request)]
        return Profile.objects.filter(Q(dimension__isnull=True) | Q(dimension_id__in=mine))

    def choices_for(self, request: HttpRequest, field) -> list:
        model = field.related_model
        if model is Dimension:
            return self.filter_dimensions(request)
        if model is Profile:
            return list(self.filter_profiles(request))
        raise NotImplementedError(f"{type(self).__name__} lists no {model.__name__} choices")

    # -- search

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, search_term: str):
        names = self.get_search_fields(request)
        if not (names and search_term):
            return queryset, False
        lookups = [(_search_lookup(n), self.reveals[search_path(n)]) for n in names]
        disclosed = {r: self.disclosed_q(request, r) for r in {r for _, r in lookups}}
        terms = []
        for bit in smart_split(search_term):
            if bit.startswith(('"', "'")) and bit[0] == bit[-1]:
                bit = unescape_string_literal(bit)
            # A term matches a row on a field only where that row's value is disclosed.
            terms.append(
                functools.reduce(
                    operator.or_, (Q((lookup, bit)) & disclosed[r] for lookup, r in lookups)
                )
            )
        duplicates = any(lookup_spawns_duplicates(self.opts, lookup) for lookup, _ in lookups)
        return queryset.filter(*terms), duplicates

    # -- list filters and URL lookups

    def get_changelist(self, request: HttpRequest, **kwargs):
        return DisclosedChangeList

    def declared_lookups(self, request: HttpRequest) -> dict[str, str]:
        """Every URL lookup parameter this admin accepts, with what it reveals: those
        its list filters and date hierarchy produce, and `extra_lookups`."""
        cache = request.__dict__.setdefault("_disclosed_lookups", {})
        key = type(self)
        if key not in cache:
            found = dict(self.extra_lookups)
            for entry in self.get_list_filter(request):
                path, spec = _filter_spec(self, request, entry)
                found.update(dict.fromkeys(spec.expected_parameters(), self.reveals[path]))
            if self.date_hierarchy:
                for part in ("year", "month", "day"):
                    found[f"{self.date_hierarchy}__{part}"] = self.reveals[self.date_hierarchy]
            cache[key] = found
        return cache[key]

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        return request is not None and lookup in self.declared_lookups(request)

    def to_field_allowed(self, request: HttpRequest, to_field: str) -> bool:
        # A popup answers with the to_field's value of the row picked: the key only.
        return to_field == self.opts.pk.attname

    # -- sorting

    def sorts_on(self, order: Any) -> bool:
        """An ordering the reader may ask for: a path every reader of the row sees."""
        return isinstance(order, str) and self.reveals.get(order.lstrip("-")) == ANY

    def get_sortable_by(self, request: HttpRequest):
        out = []
        for entry in self.get_list_display(request):
            # As ChangeList.get_ordering_field finds the ordering: a model field's name,
            # else the callable's admin_order_field.
            if callable(entry):
                order = getattr(entry, "admin_order_field", None)
            elif entry in {f.name for f in self.opts.get_fields()}:
                order = entry
            else:
                order = getattr(getattr(self, entry, None), "admin_order_field", None)
            if self.sorts_on(order):
                out.append(entry)
        return out

    # -- history: the changelist's rows, shown through the reader, never reverted

    def get_urls(self):
        urls = super().get_urls()
        if not _tracked(self.model):
            return urls
        # The revert form's address stays routed, answering 404, so that no catch-all
        # route turns it into something else.
        form = re_path(
            r"^([^/]+)/history/([^/]+)/$",
            self.admin_site.admin_view(self.history_form_view),
            name=f"{self.opts.app_label}_{self.opts.model_name}_simple_history",
        )
        return [form, *urls]

    def history_form_view(self, request: HttpRequest, object_id: str, version_id: str, **kw):
        raise Http404("there is no history revert form")

    def readable_object(self, request: HttpRequest, object_id: str):
        """The changelist's row with this id, or 404 (as for an id nothing has)."""
        try:
            obj = self.get_queryset(request).filter(pk=unquote(object_id)).first()
        except (ValueError, ValidationError):
            obj = None
        if obj is None or not self.has_view_permission(request, obj):
            raise Http404("no readable row has this id")
        return obj

    def history_value(self, request: HttpRequest, obj, name: str, value: Any) -> str:
        """A stored value of field `name` of `obj`'s history as this reader may see it."""
        return shown(value)

    def history_names_users(self, request: HttpRequest, obj) -> bool:
        """Whether the history names who made each change (the row's own tenant's users)."""
        return True

    def history_view(self, request: HttpRequest, object_id: str, extra_context=None):
        obj = self.readable_object(request, object_id)
        if not _tracked(self.model):
            return super().history_view(request, object_id, extra_context)
        return self.render_history(request, obj, extra_context)

    def render_history(self, request: HttpRequest, obj, extra_context=None) -> HttpResponse:
        manager = getattr(self.model, self.opts.simple_history_manager_attribute)
        # A row's history is a handful of versions; the newest HISTORY_ROWS are shown.
        rows = list(
            manager.filter(**{self.opts.pk.attname: obj.pk})
            .select_related("history_user")
            .order_by("-history_date", "-history_id")[: HISTORY_ROWS + 1]
        )
        names = self.history_names_users(request, obj)
        entries = []
        for row, before in zip(rows, [*rows[1:], None], strict=True):
            changes = []
            if before is not None:
                delta = row.diff_against(before, foreign_keys_are_objs=False)
                changes = [
                    (
                        c.field,
                        self.history_value(request, obj, c.field, c.old),
                        self.history_value(request, obj, c.field, c.new),
                    )
                    for c in delta.changes
                ]
            entries.append(
                {
                    "at": row.history_date,
                    "kind": row.get_history_type_display(),
                    "by": _username(row.history_user) if names else WITHHELD,
                    "reason": row.history_change_reason or "",
                    "changes": changes,
                }
            )
        context = {
            **self.admin_site.each_context(request),
            "title": f"History: {obj}",
            "subtitle": None,
            "opts": self.opts,
            "module_name": capfirst(self.opts.verbose_name_plural),
            "object": obj,
            "entries": entries[:HISTORY_ROWS],
            "truncated": len(entries) > HISTORY_ROWS,
            **(extra_context or {}),
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, HISTORY_TEMPLATE, context)

    # -- the declarations, checked at start-up (manage.py check, the test suite)

    def check(self, **kwargs) -> list[checks.CheckMessage]:
        return [*super().check(**kwargs), *_declaration_errors(self)]


def _tracked(model) -> bool:
    return hasattr(model._meta, "simple_history_manager_attribute")


def _username(user) -> str:
    return user.get_username() if user is not None else "system"


def _filter_spec(model_admin: DisclosedAdmin, request: HttpRequest, entry):
    """(declared path, a filter instance with no value) for one list_filter entry."""
    model = model_admin.model
    if isinstance(entry, type) and issubclass(entry, admin.SimpleListFilter):
        return entry.parameter_name, entry(request, {}, model, model_admin)
    path, factory = entry if isinstance(entry, list | tuple) else (entry, None)
    field = get_fields_from_path(model, path)[-1]
    if factory is None:
        factory = admin.FieldListFilter.create
    return path, factory(field, request, {}, model, model_admin, field_path=path)


def _filter_class(model, entry) -> type | None:
    """The class Django would use for a list_filter entry (without building it)."""
    if isinstance(entry, type):
        return entry
    path, factory = entry if isinstance(entry, list | tuple) else (entry, None)
    if factory is not None:
        return factory
    field = get_fields_from_path(model, path)[-1]
    for test, klass in compat.list_filter_registry():
        if test(field):
            return klass
    return None


def _declaration_errors(model_admin: DisclosedAdmin) -> list[checks.CheckMessage]:
    name = type(model_admin).__name__
    known = {ANY, *model_admin.known_reveals}
    errors: list[checks.CheckMessage] = []

    def error(text: str, code: int) -> None:
        where = type(model_admin)
        errors.append(checks.Error(f"{name}: {text}", obj=where, id=f"policies.A{code:03}"))

    for path, reveal in [*model_admin.reveals.items(), *model_admin.extra_lookups.items()]:
        if reveal not in known:
            error(f"{path!r} reveals {reveal!r}, which disclosed_q does not know", 1)
    for field in model_admin.search_fields:
        if search_path(field) not in model_admin.reveals:
            error(f"search field {field!r} does not declare what it reveals", 2)
    if model_admin.date_hierarchy and model_admin.date_hierarchy not in model_admin.reveals:
        error(f"date_hierarchy {model_admin.date_hierarchy!r} is not declared", 3)
    for entry in model_admin.list_filter:
        if isinstance(entry, type):
            path = getattr(entry, "parameter_name", None)
        else:
            path = entry[0] if isinstance(entry, list | tuple) else entry
        if path not in model_admin.reveals:
            error(f"list filter {path!r} does not declare what it reveals", 4)
            continue
        try:
            klass = _filter_class(model_admin.model, entry)
        except (FieldDoesNotExist, NotRelationField):
            continue  # Django's own checks name the missing field (admin.E116)
        scoped = isinstance(klass, type) and issubclass(klass, ScopedRelatedFilter)
        related = isinstance(klass, type) and issubclass(klass, admin.RelatedFieldListFilter)
        values = isinstance(klass, type) and issubclass(klass, admin.AllValuesFieldListFilter)
        only = isinstance(klass, type) and issubclass(klass, admin.RelatedOnlyFieldListFilter)
        if related and not (scoped or only):
            # Plain relation filters list every row of the related table.
            error(f"list filter {path!r} lists every related row; use a ScopedRelatedFilter", 5)
        if values and "__" in path:
            error(f"list filter {path!r} lists values of rows outside the admin's", 6)
        if (values or only) and model_admin.reveals[path] != ANY:
            error(f"list filter {path!r} lists stored values of a withheld kind", 7)
    return errors
