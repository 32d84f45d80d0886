"""The admin as the matrix walks it: every ModelAdmin in `admin.site._registry` (so an
admin registered later is walked too), its changelist's rows and counts, its declared
filters and the lookups it does not declare, its object URLs, and form bodies to POST.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time
from urllib.parse import urlencode

from django.contrib import admin
from django.contrib.admin.options import IS_POPUP_VAR, TO_FIELD_VAR
from django.contrib.admin.utils import unquote
from django.contrib.admin.views.main import (
    ALL_VAR,
    ERROR_FLAG,
    ORDER_VAR,
    PAGE_VAR,
    SEARCH_VAR,
)
from django.contrib.auth import get_user_model
from django.db.models import Max, Model
from django.test import RequestFactory
from django.urls import URLPattern, reverse

from policies.models import Dimension
from tests.leaks.probing import Answer, Probe, row_dimensions

RESERVED = {ALL_VAR, ERROR_FLAG, ORDER_VAR, PAGE_VAR, SEARCH_VAR, TO_FIELD_VAR, IS_POPUP_VAR}
_PARAM = re.compile(r"<(?:(?P<conv>\w+):)?(?P<name>\w+)>|\([^)]*\)")
_COUNT = re.compile(r'<p class="paginator">\s*(\d+)')
_TABLE = re.compile(r'<table id="result_list">(.*?)</table>', re.S)


@dataclass(frozen=True)
class Admin:
    model: type[Model]
    modeladmin: admin.ModelAdmin

    @property
    def label(self) -> str:
        return self.model._meta.label

    @property
    def base(self) -> str:
        return f"/admin/{self.model._meta.app_label}/{self.model._meta.model_name}/"

    @property
    def changelist(self) -> str:
        opts = self.model._meta
        return reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")

    def request(self, user, query: str = ""):
        """A request of `user` for the changelist, as Django builds the ChangeList from."""
        request = RequestFactory().get(self.changelist + query)
        request.user = user
        return request


def registered() -> list[Admin]:
    return sorted(
        (Admin(model, modeladmin) for model, modeladmin in admin.site._registry.items()),
        key=lambda a: a.label,
    )


# -- the changelist


def listed(admin_: Admin, answer: Answer) -> tuple[int | None, list[str]]:
    """The changelist's count (its paginator) and the pks of the rows it lists."""
    count = _COUNT.search(answer.body)
    table = _TABLE.search(answer.body)
    pks: list[str] = []
    if table:
        link = re.compile(re.escape(admin_.base) + r'([^/"]+)/change/')
        for found in link.findall(table.group(1)):
            if unquote(found) not in pks:
                pks.append(unquote(found))
    return (int(count.group(1)) if count else None), pks


def check_rows(probe: Probe, admin_: Admin, answer: Answer) -> None:
    """A changelist lists only rows of the reader's Dimensions (or of none)."""
    if answer.status != 200:
        return
    rows = probe.rows.get(admin_.model, {})
    own = probe.own[answer.reader]
    for pk in listed(admin_, answer)[1]:
        dims = rows.get(pk)
        if dims is not None and not (dims & own):
            probe.fail("lists a row of another Dimension", answer, pk)


def stored_texts(probe: Probe, model: type[Model], path: str) -> list[str]:
    """Every stored value at `path` from the model's rows, as text (once per probe)."""
    key = ("texts", model, path)
    if key not in probe.cache:
        values = model._base_manager.values_list(path, flat=True).distinct()
        probe.cache[key] = [
            json.dumps(v) if isinstance(v, dict | list) else str(v) for v in values if v is not None
        ]
    return probe.cache[key]


def query(admin_: Admin, param: str, value: str) -> str:
    return f"{admin_.changelist}?{urlencode({param: value})}"


def search_paths(admin_: Admin, user) -> list[str]:
    fields = admin_.modeladmin.get_search_fields(admin_.request(user))
    return [f.lstrip("^=@") for f in fields or ()]


# -- filters and lookups


def changelist_instance(admin_: Admin, user, query: str = ""):
    return admin_.modeladmin.get_changelist_instance(admin_.request(user, query))


def filter_choices(changelist) -> Iterator[tuple[bool, str]]:
    """(whether it filters by tenant, query string) for every choice of every declared
    list filter but "All" (the plain changelist). A filter on a relation or a Dimension
    can cross tenants; one on a value only narrows the reader's own rows."""
    for spec in changelist.filter_specs:
        model_field = getattr(spec, "field", None)
        tenant = bool(getattr(model_field, "is_relation", False)) or any(
            "dimension" in p for p in spec.expected_parameters()
        )
        for choice in spec.choices(changelist):
            if choice["query_string"] not in ("", "?"):
                yield tenant, choice["query_string"]


def declared_parameters(admin_: Admin, changelist, user) -> set[str]:
    """The query parameters the admin declares: its filters', its date hierarchy's, and
    the changelist's own (search, order, page, …)."""
    names = set(RESERVED)
    for spec in changelist.filter_specs:
        names |= set(spec.expected_parameters())
    hierarchy = admin_.modeladmin.date_hierarchy
    if hierarchy:
        names |= {f"{hierarchy}__{part}" for part in ("year", "month", "day")}
    return names


def hierarchy_links(answer: Answer, admin_: Admin) -> list[str]:
    """The date hierarchy's drill-down query strings on a changelist page."""
    field_name = admin_.modeladmin.date_hierarchy
    if not field_name:
        return []
    found = re.findall(r'href="(\?[^"]*)"', answer.body)
    return sorted({q.replace("&amp;", "&") for q in found if f"{field_name}__" in q})


def refused(answer: Answer) -> bool:
    """Django refuses a lookup with 400 (disallowed) or a redirect to ?e=1 (invalid)."""
    if answer.status in (400, 403, 404):
        return True
    return answer.status == 302 and f"{ERROR_FLAG}=1" in answer.location


# -- object URLs


@dataclass(frozen=True)
class ObjectRoute:
    pattern: str  # relative to the admin's base, converters or regex groups in place
    params: tuple[str, ...]

    @property
    def history(self) -> bool:
        return "history" in self.pattern

    @property
    def revert_form(self) -> bool:
        return "version_id" in self.params


def object_routes(admin_: Admin) -> list[ObjectRoute]:
    """The admin's URL patterns that take an object id (and maybe a history id)."""
    out = []
    for entry in admin_.modeladmin.get_urls():
        if not isinstance(entry, URLPattern):
            continue
        pattern = str(entry.pattern).lstrip("^").rstrip("$")
        params, groups = [], iter(("object_id", "version_id"))
        for found in _PARAM.finditer(pattern):
            params.append(found.group("name") or next(groups, "extra"))
        if "object_id" in params and set(params) <= {"object_id", "version_id"}:
            out.append(ObjectRoute(pattern, tuple(params)))
    return out


def object_url(admin_: Admin, route: ObjectRoute, object_id: str, version_id: str = "") -> str:
    values = iter({"object_id": object_id, "version_id": version_id}[p] for p in route.params)
    return admin_.base + _PARAM.sub(lambda m: next(values), route.pattern)


def unknown_pk(model: type[Model], *, offset: int = 1_000_003) -> str:
    """A primary key of the model's type that no row has."""
    kind = model._meta.pk.get_internal_type()
    if kind == "UUIDField":
        return str(uuid.uuid4())
    if kind in ("AutoField", "BigAutoField", "IntegerField", "PositiveIntegerField"):
        top = model._base_manager.aggregate(top=Max("pk"))["top"] or 0
        return str(top + offset)
    sample = model._base_manager.values_list("pk", flat=True).first() or "x" * 64
    return (uuid.uuid4().hex * 4)[: len(str(sample))]


def history_model(model: type[Model]):
    name = getattr(model._meta, "simple_history_manager_attribute", None)
    return getattr(model, name).model if name else None


def history_ids(model: type[Model], pk: str) -> list[str]:
    history = history_model(model)
    if history is None:
        return []
    rows = history.objects.filter(**{model._meta.pk.attname: pk}).order_by("-history_id")
    return [str(h) for h in rows.values_list("history_id", flat=True)[:2]]


def unknown_history_id(model: type[Model]) -> str:
    history = history_model(model)
    # Far from unknown_pk's numbers, so the two never coincide.
    return unknown_pk(history, offset=7_000_019) if history is not None else "7000019"


def form_data(obj: Model, *, user, changed: bool) -> dict[str, str]:
    """The admin form's fields holding the object's values; `changed` moves each choice,
    user, Dimension and flag elsewhere (role=steward, user=self, …)."""
    data: dict[str, str] = {"_save": "Save", "post": "yes"}
    for model_field in type(obj)._meta.concrete_fields:
        if model_field.primary_key:
            continue
        value = model_field.value_from_object(obj)
        if changed:
            value = _moved(model_field, value, user)
        name = model_field.name
        if value is None:
            data[name] = ""
        elif isinstance(value, bool):
            if value:
                data[name] = "on"
        elif isinstance(value, datetime):
            data.update(
                {
                    name: value.isoformat(),
                    f"{name}_0": value.date().isoformat(),
                    f"{name}_1": value.time().isoformat(),
                }
            )
        elif isinstance(value, date | time):
            data[name] = value.isoformat()
        elif isinstance(value, dict | list):
            data[name] = json.dumps(value)
        else:
            data[name] = str(value)
    return data


def _moved(model_field, value, user):
    if model_field.choices:
        options = [str(c) for c, _ in model_field.flatchoices if str(c) != str(value)]
        return "steward" if "steward" in options else (options[0] if options else value)
    if model_field.is_relation and model_field.related_model is get_user_model():
        return user.pk if user is not None else value
    if model_field.is_relation and model_field.related_model is Dimension:
        other = Dimension.objects.exclude(pk=value).values_list("pk", flat=True).first()
        return other if other is not None else value
    if isinstance(value, bool):
        return not value
    return value


# -- what to probe with


def sample_rows(probe: Probe, admin_: Admin) -> dict[str, str]:
    """A row of each Dimension only ("a", "b"), else a row of none ("shared")."""
    rows = probe.rows.get(admin_.model)
    if rows is None:
        rows = probe.rows[admin_.model] = row_dimensions(admin_.model)
    a, b = (probe.world.dimensions[k].pk for k in ("a", "b"))
    out: dict[str, str] = {}
    for pk in sorted(rows):
        key = {frozenset({a}): "a", frozenset({b}): "b"}.get(rows[pk], "shared")
        out.setdefault(key, pk)
    if "a" in out or "b" in out:
        out.pop("shared", None)
    return out
