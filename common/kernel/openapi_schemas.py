"""Shipped Draft 2020-12 JSON Schemas as OpenAPI 3.1 Schema Objects.

OpenAPI 3.1's Schema Object is JSON Schema 2020-12, so a shipped schema carries over
with every constraint the server checks with it (conditionals, pattern-keyed members,
`const`, `unevaluatedProperties`, type lists with "null"). What changes is only how
it is placed in a larger document: its `$defs` are inlined where referenced (a
reference back into a definition being expanded, i.e. recursion, becomes a reference
to the named component itself, `component`, or stays open when there is none), and
its identity keywords go (`$schema`, `$id`; the title, a sentence, would become a
generated client's class name: it joins the description instead). Used by every
app's API (this is the bottom layer).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from common.kernel.text import STORABLE

# Keywords of a whole schema document, not of an embedded Schema Object.
_DROPPED = {"$schema", "$id", "$comment", "$defs", "definitions", "title", "x-error-detail"}
COMPONENTS = "#/components/schemas/"
_ANNOTATIONS = {"description", "default", "examples", "readOnly", "writeOnly", "deprecated"}


def converted_file(path: Path, shown_as: str, component: str | None = None) -> dict[str, Any]:
    """A shipped Draft 2020-12 schema file as an OpenAPI 3.1 Schema Object, to be the
    component named `component` (recursive references point at it)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    converted = _convert(document, document.get("$defs", {}), (), component)
    converted["description"] = (
        f"{document.get('description', document.get('title', ''))} Shipped JSON Schema: "
        f"{document.get('$id', path.stem)} ({shown_as}), which the server validates with."
    ).strip()
    return converted


def _convert(node: Any, defs: dict[str, Any], seen: tuple[str, ...], component: str | None) -> Any:
    if isinstance(node, list):
        return [_convert(item, defs, seen, component) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    if "$ref" in node:
        name = node["$ref"].removeprefix("#/$defs/")
        if node["$ref"] == "#" or name in seen or name not in defs:
            # Recursion: the component itself (the whole document is the component).
            out = {"$ref": COMPONENTS + component} if component else {}
        else:
            out = _convert(defs[name], defs, (*seen, name), component)
        siblings = _convert({k: v for k, v in node.items() if k != "$ref"}, defs, seen, component)
        if set(siblings) <= _ANNOTATIONS and "$ref" not in out:
            return {**out, **siblings}
        return {"allOf": [out], **siblings} if siblings else out
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key in ("properties", "patternProperties", "dependentSchemas"):
            out[key] = {name: _convert(sub, defs, seen, component) for name, sub in value.items()}
        elif key in ("enum", "const", "default", "examples", "required"):
            out[key] = value  # values, not schemas
        elif key in ("if", "not"):
            # A condition tests the value; the storable rule constrains it, and inside
            # a condition it would turn the test around (a U+0000 escaping `then`).
            out[key] = _without_storable(_convert(value, defs, seen, component))
        else:
            out[key] = _convert(value, defs, seen, component)
    # A conditional whose every outcome has one type has that type: said on the whole,
    # so a reader that skips conditionals (a client generator) still knows it.
    outcomes = [out.get("then"), out.get("else")]
    if "type" not in out and "if" in out and all(isinstance(o, dict) for o in outcomes):
        kinds = {json.dumps(o.get("type")) for o in outcomes}
        if len(kinds) == 1 and "null" not in kinds:
            out["type"] = outcomes[0]["type"]
    # Free text is storable text (the server refuses U+0000 and lone surrogates in any
    # string of a body before the schema is applied: common.kernel.text).
    # A type list with "string" too (a reference or an object): `pattern` applies to
    # its strings only.
    kind = out.get("type")
    text = kind == "string" or (isinstance(kind, list) and "string" in kind)
    if text and not {"pattern", "format", "enum", "const"} & set(out):
        out["pattern"] = STORABLE
    elif text and _may_hold_nul(out.get("pattern")):
        # A pattern of its own that admits U+0000 (a negated class, a dot): the
        # storable rule beside it.
        out["allOf"] = [*out.get("allOf", []), {"pattern": STORABLE}]
    return out


def _may_hold_nul(pattern: Any) -> bool:
    return isinstance(pattern, str) and bool(re.search(r"\[\^|(?<!\\)\.", pattern))


def _without_storable(node: Any) -> Any:
    if isinstance(node, list):
        return [_without_storable(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: _without_storable(value)
        for key, value in node.items()
        if not (key == "pattern" and value == STORABLE)
        and not (key == "allOf" and value == [{"pattern": STORABLE}])
    }
