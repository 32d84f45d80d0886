"""WSP validation's schema check and its fast walk change no verdict and no offender.

validate_response validates with jsonschema-rs (common/kernel/schemas.py), which must
accept what jsonschema accepts and lead to the offenders jsonschema's errors led to,
and trusts the pointer-free walk when it finds nothing banned or unstorable (the full
scans are skipped). These tests hold both to the reference on the fixtures and on
documents mutated at random places with values near the schema's limits. NaN and
infinities are no JSON numbers: there only "jsonschema-rs accepts" implies "jsonschema
accepts".
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from common.kernel.schemas import Schema
from evidence.wsp import validate_response
from evidence.wsp import validation as wsp_validation
from evidence.wsp.rules_envelope import (
    BANNED_KEYS,
    _walked_clean,
    banned_scan,
    character_offenders,
    nothing_banned_or_unstorable,
)
from tests import schema_mutations as mutations
from tests import schema_reference as reference
from tests.evidence.conftest import load

FIXTURES = ["search", "extract", "cache_hit", "aggregate"]
JSONSCHEMA = Draft202012Validator(wsp_validation.schema())


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


def test_the_shipped_schema_compiles_with_jsonschema_rs():
    assert isinstance(wsp_validation._validator(), Schema)


@pytest.mark.parametrize("name", FIXTURES)
def test_fixtures_are_accepted_by_both_validators(name):
    document = load(name)
    assert wsp_validation._validator().is_valid(document) is True
    assert JSONSCHEMA.is_valid(document)
    assert nothing_banned_or_unstorable(document)


@settings(
    max_examples=400, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(mutated_documents())
def test_jsonschema_rs_agrees_with_jsonschema(document):
    ours = wsp_validation._validator().is_valid(document)
    if reference.finite(document):
        assert ours == JSONSCHEMA.is_valid(document)
    elif ours:
        assert JSONSCHEMA.is_valid(document)


def _jsonschema_offenders(document: Any, synthesis: list[str]) -> list:
    """What _schema_offenders answered when jsonschema found the errors."""
    found = {}
    for failure in reference.failures(JSONSCHEMA, document):
        for offender in wsp_validation._from_error(failure):
            if any(wsp_validation._within(offender.pointer, p) for p in synthesis):
                continue
            found.setdefault((offender.pointer, offender.code), offender)
    return sorted(found.values(), key=lambda o: (o.pointer, o.code))


@settings(
    max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(mutated_documents())
def test_the_schema_offenders_are_those_jsonschema_named(document):
    assume(reference.finite(document))
    _, synthesis = banned_scan(document)
    expected = _jsonschema_offenders(document, synthesis)
    assert wsp_validation._schema_offenders(document, synthesis) == expected


@settings(
    max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(mutated_documents())
def test_the_clean_check_never_vouches_for_what_the_full_scans_name(document):
    banned, synthesis = banned_scan(document)
    found = banned or synthesis or character_offenders(document)
    # The fast check may send a clean document to the full scans, never a bad one past.
    if nothing_banned_or_unstorable(document):
        assert not found
    assert _walked_clean(document) == (not found)  # the walk it falls back on: exact


def test_the_clean_check_on_each_kind_of_finding():
    document = load(FIXTURES[0])
    assert nothing_banned_or_unstorable(document)
    for finding in ({"answer": 1}, {"type": "synthesis"}, "a\x00b", "\ud800", {"\ud800": 1}):
        spoiled = copy.deepcopy(document)
        spoiled["engine"] = {"name": finding}
        assert not nothing_banned_or_unstorable(spoiled), finding
    spoiled = copy.deepcopy(document)
    spoiled["engine"] = {"name": 2**70}  # orjson cannot write it: the walk judges
    assert nothing_banned_or_unstorable(spoiled)
    spoiled["engine"] = {1: "x"}  # a member name that is not a string
    assert not nothing_banned_or_unstorable(spoiled)


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
