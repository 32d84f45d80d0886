"""The fast paths of WSP validation change no verdict and no offender.

validate_response trusts the compiled schema check when it says "valid" (jsonschema
is skipped) and the pointer-free walk when it finds nothing banned or unstorable (the
full scans are skipped). These tests hold both to the slow paths' results on the
fixtures and on documents mutated at random places with values near the schema's
limits.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from evidence.wsp import validate_response
from evidence.wsp import validation as wsp_validation
from evidence.wsp.rules_envelope import (
    BANNED_KEYS,
    banned_scan,
    character_offenders,
    nothing_banned_or_unstorable,
)
from policies.fastschema import Unsupported, compile_schema
from tests import schema_mutations as mutations
from tests.evidence.conftest import load

FIXTURES = ["search", "extract", "cache_hit", "aggregate"]
JSONSCHEMA = Draft202012Validator(wsp_validation.schema())
CHECK = compile_schema(wsp_validation.schema())


WORDS = sorted(set(mutations.schema_words(wsp_validation.schema())))
# Values at the edges of the schema's types, lengths, bounds and patterns, plus what
# the banned-field and unstorable-character rules look for.
EDGE_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    0.0,
    1.0,
    0.5,
    -0.5,
    2147483647,
    2147483648,
    float("nan"),
    "",
    "x",
    "x" * 240,
    "x" * 241,
    "x" * 255,
    "x" * 256,
    "x" * 2048,
    "x" * 2049,
    "0" * 64,
    "0" * 63,
    "A" * 64,
    "2026-11-30T12:00:00Z",
    "2026-11-30t12:00:00.25+01:00",
    "2026-11-30",
    "a\x00b",
    "\ud800",
    "héllo",
    [],
    [None],
    ["x"],
    [{}],
    {},
    {"type": "synthesis"},
    {"aggregation": "concat"},
    *WORDS,
]
EXTRA_KEYS = [*WORDS, *sorted(BANNED_KEYS), "unknown", "type", "k\x00"]


@st.composite
def mutated_documents(draw) -> Any:
    document: Any = load(draw(st.sampled_from(FIXTURES)))
    for _ in range(draw(st.integers(1, 3))):
        paths = list(mutations.paths(document))
        path = draw(st.sampled_from(paths))
        # A value from the edges, or a subtree of the document moved elsewhere.
        value = copy.deepcopy(
            draw(
                st.one_of(
                    st.sampled_from(EDGE_VALUES),
                    st.sampled_from(paths).map(lambda p, d=document: mutations.at(d, p)),
                )
            )
        )
        operation = draw(st.sampled_from(["replace", "delete", "add"]))
        target = mutations.at(document, path)
        if operation == "add" and isinstance(target, dict):
            target[draw(st.sampled_from(EXTRA_KEYS))] = value
        elif operation == "add" and isinstance(target, list):
            target.append(value)
        elif not path:
            document = value
        elif operation == "delete":
            parent = mutations.at(document, path[:-1])
            del parent[path[-1]]
        else:
            mutations.at(document, path[:-1])[path[-1]] = value
    return document


def test_the_shipped_schema_compiles_so_the_fast_path_is_used():
    assert wsp_validation._fast_check() is not None


@pytest.mark.parametrize("name", FIXTURES)
def test_fixtures_are_accepted_by_both_checks(name):
    document = load(name)
    assert CHECK(document) is True
    assert JSONSCHEMA.is_valid(document)
    assert nothing_banned_or_unstorable(document)


@settings(
    max_examples=400, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(mutated_documents())
def test_the_compiled_check_agrees_with_jsonschema(document):
    assert CHECK(document) == JSONSCHEMA.is_valid(document)


@settings(
    max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(mutated_documents())
def test_the_clean_walk_agrees_with_the_full_scans(document):
    banned, synthesis = banned_scan(document)
    found = banned or synthesis or character_offenders(document)
    assert nothing_banned_or_unstorable(document) == (not found)


@settings(
    max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(mutated_documents())
def test_validate_response_names_an_offender_for_every_document_jsonschema_rejects(document):
    # Never a crash: a malformed member is an offender, whatever its shape.
    offenders = validate_response(document)
    if not JSONSCHEMA.is_valid(document):
        assert offenders, "jsonschema rejects the document but no offender was named"


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("cache_status", "disposition"), ["hit"]),
        (("observations", 0, "kind"), {"kind": "search_result"}),
        (("policy_actions",), [{"action": ["truncated_by_limit"], "reason": ["x"]}]),
    ],
)
def test_members_of_the_wrong_shape_are_offenders_not_crashes(path, value):
    document = load("search")
    mutations.at(document, path[:-1])[path[-1]] = value
    pointer = "/" + "/".join(map(str, path))
    offenders = validate_response(document)
    assert any(o.pointer.startswith(pointer) and o.code.startswith("schema.") for o in offenders)


@pytest.mark.parametrize(
    "schema",
    [
        {"uniqueItems": True},
        {"type": "array", "prefixItems": [{"type": "string"}], "items": False},
        {"multipleOf": 0.1},
        {"unevaluatedProperties": False},
        {"$ref": "other.json#/$defs/Id"},
        {"$ref": "#named", "$defs": {"a": {"$anchor": "named"}}},
        {"$dynamicRef": "#meta"},
        {"properties": {"a": {"$id": "urn:elsewhere", "type": "string"}}},
        {"$defs": {"a": {"$id": "urn:embedded"}}, "$ref": "urn:embedded"},
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"},
        {"then": {"type": "string"}},
        {"type": "decimal"},
    ],
)
def test_a_keyword_the_compiler_does_not_know_is_refused_not_guessed(schema):
    with pytest.raises(Unsupported):
        compile_schema(schema)
