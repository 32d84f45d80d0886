"""Shipped Draft 2020-12 JSON Schemas as OpenAPI 3.0 Schema Objects.

OpenAPI 3.0 knows a subset of JSON Schema: what it cannot say (conditionals,
recursion, pattern-keyed members) is dropped, which only ever makes the OpenAPI
description looser than the server, never stricter. The server's answer stays the
shipped schema's. Used by every app's API (this is the bottom layer).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Keywords OpenAPI 3.0 Schema Objects do not have; their constraints are dropped.
_DROPPED = {
    "$schema", "$id", "$comment", "$defs", "definitions", "if", "then", "else",
    "dependentRequired", "dependentSchemas", "prefixItems", "unevaluatedProperties",
    "unevaluatedItems", "contains", "propertyNames", "examples", "x-error-detail",
}  # fmt: skip


def converted_file(path: Path, shown_as: str) -> dict[str, Any]:
    """A shipped Draft 2020-12 schema file as an OpenAPI 3.0 Schema Object."""
    document = json.loads(path.read_text(encoding="utf-8"))
    converted = _convert(document, document.get("$defs", {}), ())
    converted["description"] = (
        f"{document.get('description', document.get('title', ''))} Shipped JSON Schema: "
        f"{document.get('$id', path.stem)} ({shown_as}), which the server validates with."
    ).strip()
    return converted


def _convert(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_convert(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].removeprefix("#/$defs/")
        if node["$ref"] == "#" or name in seen or name not in defs:
            return {}  # recursion: any value here (the server checks the rest)
        return _convert(defs[name], defs, (*seen, name))
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key == "const" and isinstance(value, bool):
            out["type"] = "boolean"  # a one-value boolean enum is beyond client generators
        elif key == "const":
            out["enum"] = [value]
        elif key == "type" and isinstance(value, list):
            kinds = [k for k in value if k != "null"]
            if len(kinds) == 1:
                out["type"] = kinds[0]
            elif kinds:
                out["x-types"] = kinds  # split into anyOf below
            if "null" in value:
                out["nullable"] = True
        elif key == "exclusiveMinimum" and not isinstance(value, bool):
            out["minimum"], out["exclusiveMinimum"] = value, True
        elif key == "exclusiveMaximum" and not isinstance(value, bool):
            out["maximum"], out["exclusiveMaximum"] = value, True
        elif key == "patternProperties":
            out["additionalProperties"] = True  # 3.0 cannot key members by pattern
        elif key in ("properties",):
            out[key] = {name: _convert(sub, defs, seen) for name, sub in value.items()}
        elif key == "additionalProperties" and "patternProperties" in node:
            continue
        else:
            out[key] = _convert(value, defs, seen)
    if "x-types" in out:
        out = _split_types(out)
    if "allOf" in out:
        out["allOf"] = [item for item in out["allOf"] if item]  # dropped conditionals
        if not out["allOf"]:
            del out["allOf"]
    for combiner in ("anyOf", "oneOf"):
        # {"type": "null"} is no OpenAPI 3.0 type: it becomes nullable on the whole.
        if combiner in out and {"type": "null"} in out[combiner]:
            out[combiner] = [item for item in out[combiner] if item != {"type": "null"}]
            out["nullable"] = True
            if len(out[combiner]) == 1:
                out.update(out.pop(combiner)[0])

        # An alternative that lost all its constraints admits anything: so does the whole.
        if combiner in out and not all(out[combiner]):
            del out[combiner]
    return out


# Which keywords constrain which JSON type (for a schema with several types).
_TYPE_KEYWORDS = {
    "string": {"minLength", "maxLength", "pattern", "format"},
    "object": {"properties", "required", "additionalProperties", "minProperties",
               "maxProperties"},
    "array": {"items", "minItems", "maxItems", "uniqueItems"},
    "number": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
}  # fmt: skip
_TYPE_KEYWORDS["integer"] = _TYPE_KEYWORDS["number"]


def _split_types(node: dict[str, Any]) -> dict[str, Any]:
    """{"type": ["string", "object"], …} is anyOf one schema per type (OpenAPI 3.0)."""
    kinds = node.pop("x-types")
    typed = set().union(*_TYPE_KEYWORDS.values())
    common = {k: v for k, v in node.items() if k not in typed}
    alternatives = [
        {"type": kind, **{k: v for k, v in node.items() if k in _TYPE_KEYWORDS.get(kind, ())}}
        for kind in kinds
    ]
    return {**common, "anyOf": alternatives}
