"""Postprocessing hooks that make the served OpenAPI 3.1 description say exactly what
the server does (issue 26, "the schema says what the server enforces").

- `nullable_as_31`: OpenAPI 3.0's `nullable` (left by DRF's pagination schema) as a
  "null" type, which 3.1 readers understand.
- `type_enums` (before drf-spectacular's enum hook): an `enum` without `type` (the
  shipped JSON Schemas say `{"enum": [...]}`) gets the type of its values, which the
  enum hook and client generators need.
- `enum_varnames`: every enum (a component, or inline as a parameter's) carries
  `x-enum-varnames`, so a generated client names its members (`SUPPORTING`), not
  `VALUE_0`.
- `if_match_alternative`: If-Match's shape, and required only where the body has
  no `expected_revision` to name the revision instead.
- `tagged_unions`: a shipped schema that is a union told apart by a tag (the
  selector: `allOf` of `if type is X then …`) becomes a `oneOf` of one named
  component per tag, with its discriminator: the same values validate, and a
  generated client reads each variant's members (`TextQuoteSelector.exact`), which it
  cannot find inside `if`/`then`.
- `storable_query`: a free-text query parameter admits no U+0000 (every filter and
  reference refuses it: no column can hold it).
- `response_links`: OpenAPI links from each created (or read) resource to the
  operations on it, with the id (and ETag as If-Match) its answer carries, so a
  client (and schemathesis' stateful phase) follows real ids.
- `no_untyped_schemas`: start-up guard run with the schema: a property (or item)
  with no type at all is a declaration that was forgotten; generating the schema
  fails naming it, so `make spec` and the suite notice.

And the declarations a serializer needs when its fields cannot say what it renders:
`documented_by` (another serializer describes it), `one_of` (a union of named
components), `const` (a one-value tag) and `whole_in_patch` (a PATCH body whose
members are required as declared).
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import extend_schema_field
from rest_framework.fields import CharField, Field
from rest_framework.serializers import Serializer

from common.kernel import compat
from common.kernel.fields import one_of  # noqa: F401 (the projection answers' unions)

_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}
# What makes a schema say something about its value's type.
_TYPED = ("type", "$ref", "allOf", "anyOf", "oneOf", "enum", "const", "not", "if")


def _schemas(node: Any) -> Iterator[dict[str, Any]]:
    """Every dict in the document (enums and types only occur in Schema Objects)."""
    if isinstance(node, dict):
        yield node
        for key, value in node.items():
            if key not in ("enum", "const", "default", "example", "examples"):
                yield from _schemas(value)
    elif isinstance(node, list):
        for item in node:
            yield from _schemas(item)


def nullable_as_31(result: dict, generator, request, public) -> dict:
    """OpenAPI 3.0's `nullable` (DRF's own pagination schema still says it) is no
    3.1 keyword, so a 3.1 reader ignores it: spelled as a "null" type instead."""
    for schema in _schemas(result):
        if schema.pop("nullable", False) is True:
            kind = schema.get("type")
            if isinstance(kind, str):
                schema["type"] = [kind, "null"]
            elif isinstance(kind, list) and "null" not in kind:
                kind.append("null")
            elif kind is None:
                rest = {k: schema.pop(k) for k in list(schema) if k != "description"}
                schema["oneOf"] = [rest, {"type": "null"}]
    return result


def type_enums(result: dict, generator, request, public) -> dict:
    for schema in _schemas(result):
        values = schema.get("enum")
        if isinstance(values, list) and values and "type" not in schema:
            kinds = sorted({_JSON_TYPES[type(v)] for v in values if type(v) in _JSON_TYPES})
            if "integer" in kinds and "number" in kinds:
                kinds.remove("integer")
            if kinds:
                schema["type"] = kinds[0] if len(kinds) == 1 else kinds
    return result


def _varname(value: Any) -> str:
    name = re.sub(r"[^0-9A-Za-z]+", "_", str(value)).strip("_").upper()
    if value is None:
        return "NULL"
    if isinstance(value, str) and value.startswith("-") and name:
        return f"DESC_{name}"  # an ordering's descending direction
    if not name:
        return "EMPTY"
    return f"V_{name}" if name[0].isdigit() else name


def enum_varnames(result: dict, generator, request, public) -> dict:
    for schema in _schemas(result):
        values = schema.get("enum")
        if not isinstance(values, list) or "x-enum-varnames" in schema:
            continue
        names: list[str] = []
        for value in values:
            name, n = _varname(value), 2
            while name in names:
                name, n = f"{_varname(value)}_{n}", n + 1
            names.append(name)
        schema["x-enum-varnames"] = names
    return result


# What grounding.api.conditional parses without refusing 400 invalid_if_match: `*`, or
# one strong or weak tag of a revision (1 to 999,999,999; a weak one never matches).
IF_MATCH_PATTERN = r'^(\*|(W/)?"[1-9][0-9]{0,8}")$'


def _names_expected_revision(schemas: dict, schema: dict) -> bool:
    """The body may name expected_revision (in each shape of a oneOf)."""
    shapes = [
        schemas.get(shape.get("$ref", "").rsplit("/", 1)[-1], shape)
        for shape in schema.get("oneOf", [schema])
    ]
    return bool(shapes) and all("expected_revision" in s.get("properties", {}) for s in shapes)


def if_match_alternative(result: dict, generator, request, public) -> dict:
    """If-Match has the shape the server parses, and is required only where the body
    cannot name `expected_revision` instead (a DELETE has no body)."""
    schemas = result.get("components", {}).get("schemas", {})
    for item in result.get("paths", {}).values():
        for operation in item.values():
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters", []):
                if parameter.get("in") != "header" or parameter.get("name") != "If-Match":
                    continue
                parameter["schema"] = {"type": "string", "pattern": IF_MATCH_PATTERN}
                body = (
                    operation.get("requestBody", {})
                    .get("content", {})
                    .get("application/json", {})
                    .get("schema", {})
                )
                name = body.get("$ref", "").rsplit("/", 1)[-1]
                if _names_expected_revision(schemas, schemas.get(name, {})):
                    parameter["required"] = False
    return result


def _tag_of(branch: Any) -> tuple[str, str] | None:
    """(tag member, value) of an `{"if": {tag: const}, "then": …}` branch, else None."""
    if not isinstance(branch, dict) or set(branch) != {"if", "then"}:
        return None
    condition = branch["if"].get("properties", {})
    if len(condition) != 1:
        return None
    ((tag, value),) = condition.items()
    if not isinstance(value, dict) or not isinstance(value.get("const"), str):
        return None
    return tag, value["const"]


def tagged_unions(result: dict, generator, request, public) -> dict:
    """A component that is only `if <tag> is X then <variant>` branches (the shipped
    selector schema) as a `oneOf` of its variants, each a component named by its tag
    value and closed as its `then` is; the tag is exactly one value per variant, so
    exactly one matches, as exactly one `then` applied before."""
    schemas = result.get("components", {}).get("schemas", {})
    for name, schema in list(schemas.items()):
        branches = schema.get("allOf")
        if not isinstance(branches, list) or not branches:
            continue
        tags = [_tag_of(branch) for branch in branches]
        if None in tags or len({tag for tag, _ in tags}) != 1:
            continue
        tag = tags[0][0]
        if set(schema.get("properties", {})) - {tag}:
            continue  # members outside the branches: not a plain union
        if any(value in schemas for _, value in tags):
            raise ValueError(f"{name}: a variant's name is taken: {[v for _, v in tags]}")
        mapping = {}
        for (_, value), branch in zip(tags, branches, strict=True):
            variant = dict(branch["then"])
            variant["properties"] = {
                **variant.get("properties", {}),
                tag: {"type": "string", "const": value},
            }
            schemas[value] = variant
            mapping[value] = f"#/components/schemas/{value}"
        union = {"oneOf": [{"$ref": ref} for ref in mapping.values()]}
        union["discriminator"] = {"propertyName": tag, "mapping": mapping}
        if "description" in schema:
            union["description"] = schema["description"]
        schemas[name] = union
        # The tag's enum (drf-spectacular's) is each variant's const now: dropped
        # when nothing else names it.
        ref = schema.get("properties", {}).get(tag, {}).get("$ref", "")
        if ref and not any(node.get("$ref") == ref for node in _schemas(result)):
            schemas.pop(ref.rsplit("/", 1)[-1], None)
    return result


# A query value with no U+0000 (common.kernel.text.storable; a URL's query carries
# no lone surrogate: undecodable bytes arrive as U+FFFD).
NO_NUL = "^[^\\u0000]*$"


def storable_query(result: dict, generator, request, public) -> dict:
    """Every free-text query parameter (a string without pattern, format or enum)
    says the server refuses U+0000 in it."""
    for item in result.get("paths", {}).values():
        for operation in item.values():
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema")
                if (
                    parameter.get("in") == "query"
                    and isinstance(schema, dict)
                    and schema.get("type") == "string"
                    and not {"pattern", "format", "enum", "const"} & set(schema)
                ):
                    schema["pattern"] = NO_NUL
    return result


_LINK = "$response.body#/grounding_id"
_ETAG = "$response.header.ETag"
# The operations on a link, by operationId: (its path arguments, If-Match from ETag?)
_ON_LINK = {
    "groundings_read": {"grounding_id": _LINK},
    "groundings_partial_update": {"grounding_id": _LINK, "header.If-Match": _ETAG},
    "groundings_assessments_create": {"grounding_id": _LINK, "header.If-Match": _ETAG},
    "groundings_anchor_observations_create": {"grounding_id": _LINK, "header.If-Match": _ETAG},
    "groundings_withdrawal_create": {"grounding_id": _LINK, "header.If-Match": _ETAG},
    "groundings_disposal_create": {"grounding_id": _LINK, "header.If-Match": _ETAG},
    "groundings_revisions_list": {"grounding_id": _LINK},
    "groundings_revision_read": {"grounding_id": _LINK, "revision": "$response.body#/revision"},
    "groundings_revision_proof": {"grounding_id": _LINK, "revision": "$response.body#/revision"},
    "groundings_projection_retrieve": {"grounding_id": _LINK},
}
_SET = "$response.body#/evidence_set_ref"
_WEBHOOK = "$response.body#/webhook_id"
_WEBHOOK_OPS = ("webhooks_read", "webhooks_partial_update", "webhooks_destroy",
                "webhook_deliveries_list")  # fmt: skip
# (source operationId, its status) → {target operationId: {parameter: expression}}
LINKS: dict[tuple[str, str], dict[str, dict[str, str]]] = {
    ("groundings_create", "201"): _ON_LINK,
    ("groundings_read", "200"): _ON_LINK,
    ("groundings_partial_update", "200"): _ON_LINK,
    ("evidence_sets_create", "201"): {
        "evidence_sets_retrieve": {"ref": _SET},
        "evidence_sets_members_create": {"ref": _SET, "header.If-Match": _ETAG},
    },
    ("evidence_sets_members_create", "201"): {"evidence_sets_retrieve": {"ref": _SET}},
    ("webhooks_create", "201"): {op: {"webhook_id": _WEBHOOK} for op in _WEBHOOK_OPS},
    ("profiles_create", "201"): {"profiles_publish_create": {"ref": "$response.body#/ref"}},
    ("disclosure_decisions_create", "201"): {
        op: {"key": "$response.body#/decision_ref"}
        for op in ("disclosure_decisions_read", "disclosure_decisions_destroy")
    },
    ("change_notifications_create", "201"): {
        "change_notifications_read": {"notification_id": "$response.body#/notification_id"}
    },
}


def _link_name(operation_id: str) -> str:
    return "".join(part.capitalize() for part in operation_id.split("_"))


def response_links(result: dict, generator, request, public) -> dict:
    """The OpenAPI links of `LINKS`; a link to an operation the schema does not serve
    (or from a status it does not answer) is a declaration gone stale: it fails here."""
    operations = {
        operation["operationId"]: operation
        for item in result.get("paths", {}).values()
        for operation in item.values()
        if isinstance(operation, dict) and "operationId" in operation
    }
    for (source, status), targets in LINKS.items():
        response = operations[source]["responses"][status]
        links = response.setdefault("links", {})
        for target, parameters in targets.items():
            if target not in operations:
                raise ValueError(f"OpenAPI link from {source} to unknown {target}")
            links[_link_name(target)] = {"operationId": target, "parameters": parameters}
    return result


def _untyped(node: Any, where: str, branch: bool = False) -> Iterator[str]:
    """Properties and items with no type; in a branch (allOf, then, …) a property may
    only add constraints to the type its schema declares."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from _untyped(item, f"{where}/{i}", branch)
        return
    if not isinstance(node, dict):
        return
    for name, sub in (node.get("properties") or {}).items():
        if not branch and isinstance(sub, dict) and not any(key in sub for key in _TYPED):
            yield f"{where}/properties/{name}"
        yield from _untyped(sub, f"{where}/properties/{name}")
    for key in ("items", "additionalProperties", "allOf", "anyOf", "oneOf", "then", "else"):
        sub = node.get(key)
        if key == "items" and isinstance(sub, dict) and not any(k in sub for k in _TYPED):
            yield f"{where}/items"
        if isinstance(sub, dict | list):
            yield from _untyped(sub, f"{where}/{key}", key not in ("items", "additionalProperties"))


def no_untyped_schemas(result: dict, generator, request, public) -> dict:
    untyped = [
        where
        for name, schema in result.get("components", {}).get("schemas", {}).items()
        for where in _untyped(schema, name)
    ]
    if untyped:
        raise ValueError(f"OpenAPI schemas without a type (declare them): {untyped}")
    return result


def documented_by(schema_serializer: type[Serializer]) -> Callable[[type], type]:
    """Class decorator: the decorated serializer renders answers as it does, and its
    OpenAPI schema (under its own component name) is `schema_serializer`'s, one that
    declares what the rendering emits but cannot say in fields (members merged from
    another document, members that depend on the request's `format`)."""

    def decorate(serializer_class: type) -> type:
        class Documented(OpenApiSerializerExtension):
            target_class = serializer_class

            def map_serializer(self, auto_schema: Any, direction: str) -> dict[str, Any]:
                return compat.serializer_schema(auto_schema, schema_serializer(), direction)

        Documented.__name__ = f"{serializer_class.__name__}Schema"
        return serializer_class

    return decorate


def whole_in_patch(serializer_class: type) -> type:
    """Class decorator: as a PATCH body, the serializer's required members stay
    required (drf-spectacular drops `required` from every PATCH body, as DRF's partial
    update would; a PATCH that changes one named thing requires it, e.g. a webhook's
    `active`). The component keeps its Patched… name."""

    class Whole(OpenApiSerializerExtension):
        target_class = serializer_class

        def map_serializer(self, auto_schema: Any, direction: str) -> dict[str, Any]:
            schema = compat.serializer_schema(
                auto_schema, self.target, direction, bypass_extensions=True
            )
            whole = copy.copy(self.target)
            whole.partial = False
            required = compat.serializer_schema(
                auto_schema, whole, direction, bypass_extensions=True
            )
            if required.get("required"):
                schema["required"] = required["required"]
            return schema

    Whole.__name__ = f"{serializer_class.__name__}Whole"
    return serializer_class


@functools.cache
def _const_field_class(value: str) -> type[Field]:
    field_class = type(f"Const{_varname(value).title()}Field", (CharField,), {})
    return extend_schema_field({"type": "string", "const": value})(field_class)


def const(value: str, **kwargs: Any) -> Field:
    """A string member that always has this one value (a union's tag, e.g. `format`)."""
    return _const_field_class(value)(**kwargs)
