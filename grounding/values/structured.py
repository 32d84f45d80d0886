"""One entry point for validating the registry's structured values.

Every JSON-valued data element (selectors, claim scope, anchor result, …) has a
Draft 2020-12 schema in ``grounding/schemas/<name>.json``. ``validate`` checks a
value against it, then applies the cross-field rules a schema cannot state
(``start <= end`` and the like), and, when an adoption profile pins a stricter
schema, checks that too.

Offenders carry an RFC 6901 pointer and a stable code. Details are written
here, from the schema only: they never echo the offending value, because values
may be restricted source text (quote selectors, titles, excerpts).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from common.kernel.canonical import json_text
from common.kernel.refusals import Offender, pointer_join
from common.kernel.schemas import Failure, FormatCheck, Schema, best_match
from grounding.values.structured_rules import SEMANTIC_CHECKS
from grounding.values.timestamps import parse_rfc3339

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"

SCHEMA_NAMES: frozenset[str] = frozenset(p.stem for p in SCHEMA_DIR.glob("*.json"))

# Structured values are small; deeper nesting (e.g. a long refinedBy chain) is refused
# up front rather than risking the recursion limit inside the validator.
MAX_DEPTH = 32

# An annotation keyword a schema may carry to word the detail of a failure of the
# subschema that holds it (for conditional rules whose generic wording would mislead).
DETAIL_KEYWORD = "x-error-detail"

# -- formats ------------------------------------------------------------------------
# The registry's own checks of "date-time" (the RFC 3339 the timestamps parse) and
# "uri"; any other format is checked by jsonschema-rs.

_URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*$", re.ASCII)


def _date_time(instance: str) -> bool:
    return parse_rfc3339(instance) is not None


def _uri(instance: str) -> bool:
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in instance):
        return False
    scheme = urlsplit(instance).scheme if ":" in instance else ""
    return bool(_URI_SCHEME.match(scheme)) and len(instance) > len(scheme) + 1


FORMATS: dict[str, FormatCheck] = {"date-time": _date_time, "uri": _uri}

# -- loading ------------------------------------------------------------------------


@functools.cache
def _schema(name: str) -> dict[str, Any]:
    if name not in SCHEMA_NAMES:
        raise KeyError(name)
    return json.loads((SCHEMA_DIR / f"{name}.json").read_text(encoding="utf-8"))


@functools.cache
def _resources() -> dict[str, Any]:
    """All registry schemas by $id, so a profile schema may $ref a base schema."""
    return {_schema(n)["$id"]: _schema(n) for n in sorted(SCHEMA_NAMES)}


@functools.cache
def _validator(name: str) -> Schema:
    return Schema(_schema(name), resources=_resources(), formats=FORMATS)


@functools.lru_cache(maxsize=128)
def _profile_validator(canonical: str) -> Schema:
    # A malformed pinned schema is a config error: SchemaInvalid is raised here.
    return Schema(json.loads(canonical), resources=_resources(), formats=FORMATS)


# -- the entry point ----------------------------------------------------------------


def validate(
    name: str,
    value: object,
    *,
    pointer: str = "",
    profile_schema: dict | None = None,
) -> list[Offender]:
    """Every offender of ``value`` against the schema ``name`` (empty when valid).

    ``pointer`` locates ``value`` in the enclosing document (for example
    ``/statement/answer_selector``). ``profile_schema`` is a stricter schema pinned
    by an adoption profile; its failures are reported with the code prefix
    ``profile.``. Raises KeyError for an unknown ``name``.

    Validation is a pure function of the value, so results are memoized by the
    value's canonical JSON: bulk registrations repeat representations, scopes and
    time qualifiers.
    """
    try:
        key = _memo_key(value)
        profile_key = _memo_key(profile_schema) if profile_schema is not None else None
    except (TypeError, ValueError, RecursionError):
        # Not canonical JSON (or nested too deep to serialize): validate uncached.
        return _validate(name, value, pointer=pointer, profile_schema=profile_schema)
    too_large = _too_large(key, value, pointer)
    if too_large is not None:  # before the schema walks it, and never into the memo
        return [too_large]
    found = _memo(name, key, profile_key)
    return [Offender(pointer + o.pointer, o.code, o.detail) for o in found]


def _memo_key(value: object) -> bytes | str:
    """The value's canonical JSON: orjson's sorted compact UTF-8 where it says what
    json.dumps would, else json.dumps's (raising ValueError for NaN and infinities,
    which are no JSON numbers, so that such a value is validated uncached)."""
    key = json_text(value, sort_keys=True)
    if key is not None:
        return key
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


@functools.lru_cache(maxsize=8192)
def _memo(name: str, key: bytes | str, profile_key: bytes | str | None) -> tuple[Offender, ...]:
    value = json.loads(key)
    profile_schema = json.loads(profile_key) if profile_key is not None else None
    return tuple(_validate(name, value, pointer="", profile_schema=profile_schema))


def _validate(
    name: str,
    value: object,
    *,
    pointer: str = "",
    profile_schema: dict | None = None,
) -> list[Offender]:
    """What `validate` returns, computed without its memo."""
    validator = _validator(name)
    too_deep = _too_deep(value, pointer)
    if too_deep is not None:  # refuse before the recursive validator can exhaust the stack
        return [too_deep]
    offenders: list[Offender] = list(_schema_offenders(validator, value, pointer, "schema"))
    check = SEMANTIC_CHECKS.get(name)
    if check is not None:
        offenders.extend(check(value, pointer))
    if profile_schema is not None:
        canonical = json.dumps(profile_schema, sort_keys=True, separators=(",", ":"))
        profile_validator = _profile_validator(canonical)  # a malformed schema raises here
        offenders.extend(_schema_offenders(profile_validator, value, pointer, "profile"))
    return _dedupe(offenders)


def max_value_bytes() -> int:
    return settings.GROUNDING_MAX_VALUE_BYTES


def _too_large(key: bytes | str, value: object, pointer: str) -> Offender | None:
    """A value whose compact UTF-8 JSON exceeds GROUNDING_MAX_VALUE_BYTES, as an offender.

    ``key`` is a canonical form (`_memo_key`): the ASCII-escaped one is never shorter
    than the compact UTF-8 text; orjson's is that text but for some floats' spelling
    (1e-8 for 1e-08, 0.00001 for 1e-05), never shorter by a quarter. So the exact
    size is only computed for a value near the limit.
    """
    limit = max_value_bytes()
    if len(key) <= (limit if isinstance(key, str) else limit * 3 // 4):
        return None
    size = len(
        json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "replace")
    )
    if size <= limit:
        return None
    return Offender(pointer, "value.too_large", f"larger than {limit} bytes as JSON")


def _too_deep(value: object, pointer: str) -> Offender | None:
    """The first container nested deeper than MAX_DEPTH, as an offender (iterative walk)."""
    stack: list[tuple[object, int, str]] = [(value, 0, pointer)]
    while stack:
        node, depth, where = stack.pop()
        if isinstance(node, dict | list):
            if depth >= MAX_DEPTH:
                return Offender(where, "value.too_deep", f"nested deeper than {MAX_DEPTH} levels")
            items = node.items() if isinstance(node, dict) else enumerate(node)
            stack.extend((child, depth + 1, pointer_join(where, key)) for key, child in items)
    return None


def _dedupe(offenders: Iterable[Offender]) -> list[Offender]:
    seen: set[tuple[str, str]] = set()
    out: list[Offender] = []
    for offender in offenders:
        key = (offender.pointer, offender.code)
        if key not in seen:
            seen.add(key)
            out.append(offender)
    return out


def _schema_offenders(
    validator: Schema, value: object, pointer: str, prefix: str
) -> Iterable[Offender]:
    # failures() is empty at the cost of one is_valid when the value is valid.
    for error in validator.failures(value):
        if error.context:  # oneOf/anyOf: name the deepest failing member when one stands out
            error = best_match(error)
        yield from _offenders_for(error, pointer, prefix)


def _offenders_for(error: Failure, pointer: str, prefix: str) -> Iterable[Offender]:
    keyword = error.keyword
    where = pointer_join(pointer, *error.path)
    code = f"{prefix}.{keyword}"
    instance = error.instance
    schema = error.schema
    custom = schema.get(DETAIL_KEYWORD)

    if keyword == "required" and isinstance(instance, dict):
        for member in error.value:
            if member not in instance:
                yield Offender(
                    pointer_join(where, member), code, custom or f"'{member}' is required"
                )
        return
    if keyword == "dependentRequired" and isinstance(instance, dict):
        for present, needed in error.value.items():
            for member in needed:
                if present in instance and member not in instance:
                    detail = custom or f"'{member}' is required when '{present}' is present"
                    yield Offender(pointer_join(where, member), code, detail)
        return
    if keyword == "additionalProperties" and isinstance(instance, dict):
        members = _additional_members(instance, schema)
        for member in members:
            yield Offender(pointer_join(where, member), code, custom or "member not allowed here")
        if members:
            return
    yield Offender(where, code, custom or _detail(keyword, error))


def _additional_members(instance: dict, schema: dict) -> list[str]:
    declared = schema.get("properties", {})
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    return [k for k in instance if k not in declared and not any(p.search(k) for p in patterns)]


def _word(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _detail(keyword: str, error: Failure) -> str:
    """A message built from the schema alone: never from the instance."""
    v = error.value
    match keyword:
        case "type":
            kinds = v if isinstance(v, list) else [v]
            return "must be of type " + " or ".join(str(k) for k in kinds)
        case "enum":
            if isinstance(v, list) and len(v) <= 12:
                return "must be one of " + ", ".join(_word(x) for x in v)
            return "must be one of the allowed values"
        case "const":
            return f"must be {_word(v)}"
        case "minLength":
            return f"must be at least {v} character{'s' if v != 1 else ''} long"
        case "maxLength":
            return f"must be at most {v} characters long"
        case "pattern":
            return f"must match the pattern {v}"
        case "format":
            return f"must be a valid {v}"
        case "minimum":
            return f"must be ≥ {v}"
        case "maximum":
            return f"must be ≤ {v}"
        case "exclusiveMinimum":
            return f"must be > {v}"
        case "exclusiveMaximum":
            return f"must be < {v}"
        case "multipleOf":
            return f"must be a multiple of {v}"
        case "minItems":
            return f"must have at least {v} item{'s' if v != 1 else ''}"
        case "maxItems":
            return f"must have at most {v} item{'s' if v != 1 else ''}"
        case "uniqueItems":
            return "items must be unique"
        case "minProperties":
            return f"must have at least {v} member{'s' if v != 1 else ''}"
        case "maxProperties":
            return f"must have at most {v} member{'s' if v != 1 else ''}"
        case "oneOf":
            return "must match exactly one of the allowed forms"
        case "anyOf":
            return "must match one of the allowed forms"
        case "not":
            return "is a form not allowed here"
        case "false":
            return "not allowed here"
        case _:
            return f"fails the '{keyword}' constraint"
