"""The leaf keywords of the compiled schema check: each looks at one instance only.

Every function takes the keyword's value (and its schema, for keywords that read a
sibling) and returns a yes/no check with the semantics of the same-named function in
``jsonschema/_keywords.py`` for Draft 2020-12. As there, a keyword that does not apply
to the instance's type passes it. A keyword value these functions do not expect
raises `Unsupported`, so the caller validates with jsonschema instead of guessing.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Check = Callable[[Any], bool]


class Unsupported(ValueError):
    """The schema uses something the compiler does not implement."""


def is_integer(value: Any) -> bool:
    # Draft 6+: a float with an integral value is an integer; a bool never is.
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "integer": is_integer,
    "number": is_number,
}
# Types that one isinstance() decides (bool is not an integer, see is_integer).
CLASSES = {"object": dict, "array": list, "string": str, "boolean": bool}

# jsonschema's equal() tells True from 1 and False from 0 by swapping bools for these.
_TRUE, _FALSE = object(), object()


def _unbool(value: Any) -> Any:
    if value is True:
        return _TRUE
    if value is False:
        return _FALSE
    return value


def equal(one: Any, two: Any) -> bool:
    """jsonschema._utils.equal, step for step (enum and const compare with it)."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return one == two
    if isinstance(one, Sequence) and isinstance(two, Sequence):
        return len(one) == len(two) and all(equal(i, j) for i, j in zip(one, two, strict=True))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return len(one) == len(two) and all(
            key in two and equal(value, two[key]) for key, value in one.items()
        )
    return _unbool(one) == _unbool(two)


def _limit(value: Any, keyword: str) -> Any:
    if not is_number(value):
        raise Unsupported(f"{keyword} of {value!r}")
    return value


def _names(value: Any, keyword: str) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise Unsupported(f"{keyword} of {value!r}")
    return frozenset(value)


def k_type(types: Any, schema: dict) -> Check:
    names = [types] if isinstance(types, str) else types
    if not isinstance(names, list) or not names or any(name not in TYPES for name in names):
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


def _one_of_values(allowed: list) -> Check:
    # equal() compares a string to anything with plain ==, so strings go in a set;
    # only the other members need equal()'s bool-aware comparison.
    strings = frozenset(each for each in allowed if isinstance(each, str))
    others = [each for each in allowed if not isinstance(each, str)]
    if not others:
        return lambda value: isinstance(value, str) and value in strings
    if all(each is None or isinstance(each, bool) for each in others):
        # equal(x, None/True/False) holds only for that very object.
        return lambda value: (
            value in strings if isinstance(value, str) else any(value is o for o in others)
        )
    return lambda value: (
        value in strings if isinstance(value, str) else any(equal(o, value) for o in others)
    )


def k_enum(enums: Any, schema: dict) -> Check:
    if not isinstance(enums, list):
        raise Unsupported(f"enum of {enums!r}")
    return _one_of_values(enums)


def k_const(const: Any, schema: dict) -> Check:
    return _one_of_values([const])


def k_minLength(limit: Any, schema: dict) -> Check:
    limit = _limit(limit, "minLength")
    return lambda value: not isinstance(value, str) or len(value) >= limit


def k_maxLength(limit: Any, schema: dict) -> Check:
    limit = _limit(limit, "maxLength")
    return lambda value: not isinstance(value, str) or len(value) <= limit


def k_pattern(pattern: Any, schema: dict) -> Check:
    search = compile_pattern(pattern)
    return lambda value: not isinstance(value, str) or search(value) is not None


def compile_pattern(pattern: Any) -> Callable[[str], Any]:
    """re.compile(...).search: jsonschema calls re.search with the same string."""
    if not isinstance(pattern, str):
        raise Unsupported(f"pattern {pattern!r}")
    try:
        return re.compile(pattern).search
    except re.error as error:
        raise Unsupported(f"pattern {pattern!r}: {error}") from None


def k_minimum(limit: Any, schema: dict) -> Check:
    limit = _limit(limit, "minimum")
    return lambda value: not is_number(value) or not value < limit


def k_maximum(limit: Any, schema: dict) -> Check:
    limit = _limit(limit, "maximum")
    return lambda value: not is_number(value) or not value > limit


def k_exclusiveMinimum(limit: Any, schema: dict) -> Check:
    limit = _limit(limit, "exclusiveMinimum")
    return lambda value: not is_number(value) or not value <= limit


def k_exclusiveMaximum(limit: Any, schema: dict) -> Check:
    limit = _limit(limit, "exclusiveMaximum")
    return lambda value: not is_number(value) or not value >= limit


def k_minItems(limit: Any, schema: dict) -> Check:
    limit = _limit(limit, "minItems")
    return lambda value: not isinstance(value, list) or len(value) >= limit


def k_maxItems(limit: Any, schema: dict) -> Check:
    limit = _limit(limit, "maxItems")
    return lambda value: not isinstance(value, list) or len(value) <= limit


def k_minProperties(limit: Any, schema: dict) -> Check:
    limit = _limit(limit, "minProperties")
    return lambda value: not isinstance(value, dict) or len(value) >= limit


def k_maxProperties(limit: Any, schema: dict) -> Check:
    limit = _limit(limit, "maxProperties")
    return lambda value: not isinstance(value, dict) or len(value) <= limit


def k_required(names: Any, schema: dict) -> Check:
    required = _names(names, "required")
    return lambda value: not isinstance(value, dict) or value.keys() >= required


def k_dependentRequired(dependencies: Any, schema: dict) -> Check:
    if not isinstance(dependencies, dict):
        raise Unsupported(f"dependentRequired of {dependencies!r}")
    pairs = [(name, _names(needed, "dependentRequired")) for name, needed in dependencies.items()]

    def check(value: Any) -> bool:
        if isinstance(value, dict):
            for name, needed in pairs:
                if name in value and not value.keys() >= needed:
                    return False
        return True

    return check


# Keyword → check builder, for the keywords that never descend into a subschema.
LEAVES: dict[str, Callable[[Any, dict], Check]] = {
    "type": k_type,
    "enum": k_enum,
    "const": k_const,
    "minLength": k_minLength,
    "maxLength": k_maxLength,
    "pattern": k_pattern,
    "minimum": k_minimum,
    "maximum": k_maximum,
    "exclusiveMinimum": k_exclusiveMinimum,
    "exclusiveMaximum": k_exclusiveMaximum,
    "minItems": k_minItems,
    "maxItems": k_maxItems,
    "minProperties": k_minProperties,
    "maxProperties": k_maxProperties,
    "required": k_required,
    "dependentRequired": k_dependentRequired,
}
