"""The routes outside the admin that take an id, with the model each id names, so the
matrix can ask for another Dimension's row and for one that does not exist.

A parameter names a model when the model's primary key has its name (grounding_id,
passage_id, notification_id); otherwise (`ref`, `key`) the route's name picks the model
(evidence-set-detail: EvidenceSet) and the value is the model's attribute of that name
or its ref (`*_ref`, unique or unique per Dimension). A parameter that names no model
and is no sub-resource number makes the test fail: add it here, don't skip it.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import Model

from tests.leaks.probing import project_models
from tests.leaks.test_leak_matrix import Route, routes

_PARAM = re.compile(r"<(?:(?P<conv>\w+):)?(?P<name>\w+)>")
# Sub-resource numbers, not ids: filled with a value of the reader's own row.
NUMBERS = {"revision": "1"}
_GENERIC = {"detail", "list", "member", "members", "publish", "page", "link"}


@dataclass(frozen=True)
class IdParam:
    name: str
    model: type[Model]
    value: Callable[[Model], str]
    uuid: bool


def id_routes() -> list[Route]:
    return [r for r in routes() if not r.pattern.startswith("admin/") and _PARAM.search(r.pattern)]


def params_of(route: Route) -> list[tuple[str, str | None]]:
    return [(m.group("name"), m.group("conv")) for m in _PARAM.finditer(route.pattern)]


def _is_uuid(conv: str | None) -> bool:
    """A uuid parameter: Django's converter, or one the OpenAPI description declares a
    uuid (PATH_CONVERTER_OVERRIDES: a converter taking any segment, parsed by its view)."""
    from django.conf import settings

    declared = settings.SPECTACULAR_SETTINGS.get("PATH_CONVERTER_OVERRIDES", {}).get(conv)
    return conv == "uuid" or (isinstance(declared, dict) and declared.get("format") == "uuid")


def resolve(route: Route, name: str, conv: str | None) -> IdParam | None:
    """The model a path parameter names (None: a number or not resolvable)."""
    models = [m for m in project_models() if not m.__name__.startswith("Historical")]
    for model in models:
        if model._meta.pk.name == name:
            return IdParam(name, model, lambda o: str(o.pk), _is_uuid(conv))
    tokens = {t for t in re.split(r"[-_]", route.name) if len(t) > 2} - _GENERIC
    scored = sorted(
        (-sum(t in m._meta.model_name for t in tokens), len(m._meta.model_name), m._meta.label, m)
        for m in models
        if any(t in m._meta.model_name for t in tokens)
    )
    for *_, model in scored:
        getter = _getter(model, name)
        if getter is not None:
            return IdParam(name, model, getter, _is_uuid(conv))
    return None


def _getter(model: type[Model], name: str) -> Callable[[Model], str] | None:
    if isinstance(getattr(model, name, None), property):
        return lambda o: str(getattr(o, name))
    fields = [f for f in model._meta.concrete_fields if not f.is_relation]
    for f in fields:
        if f.name == name or f.name.endswith(f"_{name}"):
            return lambda o, f=f: str(getattr(o, f.attname))
    together = {n for c in model._meta.constraints for n in getattr(c, "fields", ())}
    for f in fields:
        if f.name.endswith("_ref") and (f.unique or f.name in together):
            return lambda o, f=f: str(getattr(o, f.attname))
    return None


def fill(route: Route, values: dict[str, str]) -> str:
    return "/" + _PARAM.sub(lambda m: values[m.group("name")], route.pattern)


def unknown_value(param: IdParam, like: str) -> str:
    """A value of the parameter's kind that names no row."""
    if param.uuid:
        return str(uuid.uuid4())
    return f"{like}{uuid.uuid4().hex[:6]}"
