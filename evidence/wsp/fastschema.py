"""A compiled yes/no check of the shipped JSON Schema: the fast path of validation.

jsonschema resolves every ``$ref`` through the `referencing` registry and builds a
validator object per subschema it descends into; on a 20-observation response that
was most of the import's time. Here the schema is compiled once into plain closures
that only answer "does the document conform?".

The compiler knows exactly the keywords the shipped schema uses, each with
jsonschema's Draft 2020-12 semantics (see the keyword functions in
``jsonschema/_keywords.py``); any other keyword, a nested ``$id`` or a non-local
``$ref`` raises `Unsupported`, and the caller then validates with jsonschema alone.
A document the check rejects is validated again by jsonschema, which names the
offenders, so only acceptance has to agree with jsonschema exactly
(tests/evidence/test_wsp_fastschema.py compares both on mutated documents).
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

# Keywords that never constrain an instance.
ANNOTATIONS = frozenset({"$schema", "$comment", "$defs", "title", "description"})


class Unsupported(ValueError):
    """The schema uses something this compiler does not implement."""


def compile_schema(schema: dict) -> Check:
    """A function telling whether an instance is valid against `schema`."""
    return _Compiler(schema).compile(schema, root=True)


def _is_integer(value: Any) -> bool:
    # Draft 6+: a float with an integral value is an integer; a bool never is.
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "integer": _is_integer,
    "number": _is_number,
}


def _all(checks: list[Check]) -> Check:
    if not checks:
        return lambda value: True
    if len(checks) == 1:
        return checks[0]

    def check(value: Any) -> bool:
        # A plain loop: all() over a generator costs a frame per call on the hot path.
        for each in checks:  # noqa: SIM110
            if not each(value):
                return False
        return True

    return check


# Keyword → compiler method; nothing else is accepted.
KEYWORDS = {
    "$ref": "_k_ref",
    **{
        name: f"_k_{name}"
        for name in (
            "type",
            "enum",
            "const",
            "minLength",
            "maxLength",
            "pattern",
            "minimum",
            "maximum",
            "minItems",
            "items",
            "required",
            "properties",
            "additionalProperties",
            "anyOf",
            "if",
        )
    },
}
# Types that one isinstance() decides (bool is not an integer, see _is_integer).
CLASSES = {"object": dict, "array": list, "string": str, "boolean": bool}


class _Compiler:
    def __init__(self, root: dict) -> None:
        self.root = root
        # Compiled $ref targets by pointer: each target is compiled once.
        self.refs: dict[str, Check] = {}

    def compile(self, schema: Any, root: bool = False) -> Check:
        if schema is True:
            return lambda value: True
        if schema is False:
            return lambda value: False
        if not isinstance(schema, dict):
            raise Unsupported(f"schema {schema!r}")
        if "$id" in schema and not root:
            raise Unsupported("a nested $id changes the base of $ref")
        checks: list[Check] = []
        for keyword, value in schema.items():
            if keyword in ANNOTATIONS or (keyword == "$id" and root):
                continue
            if keyword in ("then", "else"):
                continue  # compiled with "if"
            if keyword not in KEYWORDS:
                raise Unsupported(f"keyword {keyword!r}")
            checks.append(getattr(self, KEYWORDS[keyword])(value, schema))
        if ("then" in schema or "else" in schema) and "if" not in schema:
            raise Unsupported("then/else without if")
        return _all(checks)

    # Keywords, each with jsonschema's semantics: a keyword that does not apply to
    # the instance's type passes.

    def _k_ref(self, ref: Any, schema: dict) -> Check:
        if not isinstance(ref, str) or not ref.startswith("#/"):
            raise Unsupported(f"$ref {ref!r}")
        if ref not in self.refs:
            # While the target compiles, a recursive $ref to it goes through the cell.
            cell: list[Check] = []
            self.refs[ref] = lambda value: cell[0](value)
            cell.append(self.compile(self._resolve(ref)))
            self.refs[ref] = cell[0]
        return self.refs[ref]

    def _resolve(self, ref: str) -> Any:
        node: Any = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise Unsupported(f"$ref {ref!r} does not resolve")
            node = node[part]
        return node

    def _k_type(self, types: Any, schema: dict) -> Check:
        names = [types] if isinstance(types, str) else list(types)
        if not names or any(name not in TYPES for name in names):
            raise Unsupported(f"type {types!r}")
        # The common shapes ("string", ["object", "null"]) as one cheap test.
        classes = tuple(CLASSES[name] for name in names if name in CLASSES)
        rest = [name for name in names if name not in CLASSES]
        if not rest:
            return lambda value: isinstance(value, classes)
        if rest == ["null"]:
            return lambda value: value is None or isinstance(value, classes)
        checks = [TYPES[name] for name in names]
        return lambda value: any(check(value) for check in checks)

    def _k_enum(self, enums: Any, schema: dict) -> Check:
        # jsonschema's equal() on a string is plain ==, so membership is exact.
        if not isinstance(enums, list) or not all(isinstance(e, str) for e in enums):
            raise Unsupported("enum of non-strings")
        allowed = frozenset(enums)
        return lambda value: isinstance(value, str) and value in allowed

    def _k_const(self, const: Any, schema: dict) -> Check:
        if not isinstance(const, str):
            raise Unsupported("const of a non-string")
        return lambda value: isinstance(value, str) and value == const

    def _k_minLength(self, limit: int, schema: dict) -> Check:
        return lambda value: not isinstance(value, str) or len(value) >= limit

    def _k_maxLength(self, limit: int, schema: dict) -> Check:
        return lambda value: not isinstance(value, str) or len(value) <= limit

    def _k_pattern(self, pattern: str, schema: dict) -> Check:
        search = re.compile(pattern).search
        return lambda value: not isinstance(value, str) or search(value) is not None

    def _k_minimum(self, limit: Any, schema: dict) -> Check:
        return lambda value: not _is_number(value) or not value < limit

    def _k_maximum(self, limit: Any, schema: dict) -> Check:
        return lambda value: not _is_number(value) or not value > limit

    def _k_minItems(self, limit: int, schema: dict) -> Check:
        return lambda value: not isinstance(value, list) or len(value) >= limit

    def _k_items(self, items: Any, schema: dict) -> Check:
        if "prefixItems" in schema:
            raise Unsupported("prefixItems")
        each = self.compile(items)

        def check(value: Any) -> bool:
            if isinstance(value, list):
                for item in value:
                    if not each(item):
                        return False
            return True

        return check

    def _k_required(self, names: list[str], schema: dict) -> Check:
        required = frozenset(names)
        return lambda value: not isinstance(value, dict) or value.keys() >= required

    def _k_properties(self, properties: dict, schema: dict) -> Check:
        compiled = [(name, self.compile(sub)) for name, sub in properties.items()]

        def check(value: Any) -> bool:
            if isinstance(value, dict):
                for name, each in compiled:
                    if name in value and not each(value[name]):
                        return False
            return True

        return check

    def _k_additionalProperties(self, additional: Any, schema: dict) -> Check:
        if "patternProperties" in schema:
            raise Unsupported("patternProperties")
        known = frozenset(schema.get("properties", {}))
        if additional is False:
            return lambda value: not isinstance(value, dict) or known.issuperset(value)
        each = self.compile(additional)

        def check(value: Any) -> bool:
            if isinstance(value, dict):
                for key, item in value.items():
                    if key not in known and not each(item):
                        return False
            return True

        return check

    def _k_anyOf(self, subschemas: list, schema: dict) -> Check:
        checks = [self.compile(sub) for sub in subschemas]
        return lambda value: any(check(value) for check in checks)

    def _k_if(self, condition: Any, schema: dict) -> Check:
        test = self.compile(condition)
        then = self.compile(schema.get("then", True))
        otherwise = self.compile(schema.get("else", True))
        return lambda value: then(value) if test(value) else otherwise(value)
