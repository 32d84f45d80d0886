"""The JSON Schema the from-citations payloads are written in: storable JSON and the
shapes a provider payload is built from.

A provider response carries many members no parser reads (ids, usage, model names):
they stay open, but every value in the body is storable text (no U+0000 in a string
or a member name, common.kernel.text), so an open member is a `JsonValue`, the JSON
value that rule admits. The builders here make open objects, typed unions and
conditionals of it, and name the parts a client generator must be able to name
(`COMPONENTS`, which the request's hook adds to the description). They are apart
from the payloads so that `openapi_payloads` reads as what the parsers read.
"""

from __future__ import annotations

from typing import Any

NO_NUL = "^[^\\u0000]*$"
JSON_VALUE = "JsonValue"
# The named parts of the payloads (filled as they are built).
COMPONENTS: dict[str, dict[str, Any]] = {}
ANY_JSON = {"$ref": f"#/components/schemas/{JSON_VALUE}"}
# Any JSON value whose strings and member names hold no U+0000.
JSON_VALUE_SCHEMA: dict[str, Any] = {
    "description": "Any JSON value; no string or member name holds U+0000.",
    # Untyped on purpose: each keyword applies to the values of its type only (a
    # client generator reads this as any value; a union of typed branches that
    # refer back to it is a recursion it cannot parse).
    "pattern": NO_NUL,
    "propertyNames": {"pattern": NO_NUL},
    "additionalProperties": ANY_JSON,
    "items": ANY_JSON,
}

TEXT = {"type": "string", "pattern": NO_NUL}
NONEMPTY = {"type": "string", "minLength": 1, "pattern": NO_NUL}
OPTIONAL_TEXT = {"type": ["string", "null"], "pattern": NO_NUL}  # require_str(optional)
INDEX = {"type": "integer", "minimum": 0}  # require_int
PAGE = {"type": "integer", "minimum": 1}


def open_object(
    properties: dict[str, Any] | None = None, required: list[str] | None = None, **more: Any
) -> dict[str, Any]:
    """An open object: the members a parser reads as declared, any other a JsonValue."""
    schema: dict[str, Any] = {"type": "object", "propertyNames": {"pattern": NO_NUL}}
    if properties:
        schema["properties"] = properties
    if required:
        schema["required"] = sorted(required)
    schema["additionalProperties"] = ANY_JSON
    return {**schema, **more}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def named(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` as the component `name` (an object in a nullable list, or in a union,
    is one a client generator must be able to name)."""
    COMPONENTS[name] = schema
    return _ref(name)


def named_or_null(name: str) -> dict[str, Any]:
    """A named component or null (an inline object in a union is one a client
    generator cannot name)."""
    return {"oneOf": [_ref(name), {"type": "null"}]}


def array(item: dict[str, Any], *, nullable: bool = False, **more: Any) -> dict[str, Any]:
    return {"type": ["array", "null"] if nullable else "array", "items": item, **more}


def when(tag: str, value: str, then: dict[str, Any], **also: Any) -> dict[str, Any]:
    """`if <tag> is value then …` (the tag present: an absent one selects nothing)."""
    condition = {"properties": {tag: {"const": value}, **also}, "required": [tag]}
    return {"if": condition, "then": then}


def typed_object(branches: list[dict[str, Any]], *, kind: dict[str, Any]) -> dict[str, Any]:
    """An object told apart by its `type` member: a type no branch names is read as
    the provider's own (skipped, not refused)."""
    return open_object({"type": kind}, ["type"], allOf=branches)
