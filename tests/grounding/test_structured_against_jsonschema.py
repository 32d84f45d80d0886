"""grounding.values.structured validates with jsonschema-rs and words what jsonschema found.

For every shipped schema, and for profile schemas using the keywords the shipped ones
do not, jsonschema-rs (common/kernel/schemas.py) must accept exactly what jsonschema
accepts with the same registry and format checks, and the offenders _validate names
must be those it named when jsonschema found the errors. These tests hold both to each
other on the realistic examples of test_structured_schemas.py and the factories,
mutated at random places with values near the schemas' limits. NaN and infinities are
no JSON numbers: jsonschema-rs refuses them where a number is expected, jsonschema does
not, so there only "jsonschema-rs accepts" implies "jsonschema accepts".
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from common.kernel.schemas import Schema
from grounding.values import structured
from grounding.values.structured_rules import SEMANTIC_CHECKS
from tests import schema_mutations as mutations
from tests import schema_reference as reference
from tests.factories import BASE_PAYLOAD
from tests.grounding.test_structured_schemas import BROKEN, SHA256, VALID

NAMES = sorted(structured.SCHEMA_NAMES)
SELECTOR_KEYS = {"answer_selector", "source_selector"}


def _payload_values() -> Iterator[tuple[str, Any]]:
    """The structured values of the factories' register payload, by schema name."""
    for section in BASE_PAYLOAD.values():
        if isinstance(section, dict):
            for key, value in section.items():
                if key in SELECTOR_KEYS:
                    yield "selector", value
                elif key in structured.SCHEMA_NAMES:
                    yield key, value


# Shapes the examples of test_structured_schemas.py leave out.
MORE_VALID: list[tuple[str, Any]] = [
    (
        "selector",
        {
            "type": "RangeSelector",
            "startSelector": {"type": "DataPositionSelector", "start": 0, "end": 4},
            "endSelector": {
                "type": "FragmentSelector",
                "value": "p=2",
                "conformsTo": "urn:iso:std:iso:26324",
                "refinedBy": {"type": "WspSegmentSelector", "segment": 0},
            },
            "refinedBy": {"type": "TextQuoteSelector", "exact": "x", "suffix": ""},
        },
    ),
    (
        "answer_representation",
        {
            "language": "x-klingon",
            "media_type": "text/plain",
            "digest": {"algorithm": "sha512", "value": SHA256 * 2},
        },
    ),
    (
        "representation_check",
        {
            "digest": {
                "algorithm": "sha512",
                "value": SHA256 * 2,
                "covered": {"unit": "nfc-codepoints", "start": 3, "end": 3},
            },
            "validator": {"kind": "last-modified", "value": "Tue, 1 Dec", "strength": "weak"},
        },
    ),
    ("support_limits", {"missing_premise": "bridge identity", "unknown_extent": "the day"}),
    ("support_scope", {"covers": {"proposition": "p"}, "limits": "one source"}),
    (
        "uncertainty_binding",
        {
            "kind": "qualitative",
            "value": "high",
            "calibrated": False,
            "limits": ["English", "2026"],
        },
    ),
    ("source_revision_binding", {"source_ref": "s", "revision": 0, "language": "und"}),
    ("time_uncertainty", {"review_due": {"precision": "unknown"}, "asserted_at": "year"}),
    ("applicability_interval", {"state": "bounded", "end": "2026-11-30T12:00:00.5-03:30"}),
    ("claim_scope", {"proposition": "p", "time": {"end": "1999-12-31"}}),
    ("metric_binding", {"metric_ref": "m", "metric_version": "v", "value": -3}),
    (
        "coverage_population",
        {
            "claim_inventory_revision_ref": "i",
            "numerator": 0,
            "denominator": 0,
            "counting_rule_ref": "c",
        },
    ),
]

SEEDS: dict[str, list[Any]] = {name: [] for name in NAMES}
for _name, _value in [*VALID, *MORE_VALID, *_payload_values()]:
    SEEDS[_name].append(_value)
for _name, _value, *_ in BROKEN:  # near-valid values are seeds too
    SEEDS[_name].append(_value)


WORDS = sorted({w for name in NAMES for w in mutations.schema_words(structured._schema(name))})
# Values at the edges of the schemas' types, bounds, patterns and formats.
EDGE_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    2,
    -1,
    0.0,
    1.0,
    2.0,
    0.5,
    -0.5,
    1.5,
    2**53,
    2**64,
    1e308,
    float("nan"),
    float("inf"),
    "",
    "x",
    " ",
    "0",
    SHA256,
    SHA256.upper(),
    SHA256[:-1],
    SHA256 * 2,
    "2026-11-30T12:00:00Z",
    "2026-11-30t12:00:00.25+01:00",
    "2026-02-30T12:00:00Z",
    "2026-11-30T24:00:00Z",
    "2026-11-30 12:00",
    "1932",
    "1932-03",
    "1932-03-19",
    "1932-13",
    "1932-3",
    "http://tools.ietf.org/rfc/rfc3778",
    "urn:x",
    "no scheme here",
    "a:",
    ":x",
    "http://exa mple.org",
    "1http://x",
    "en",
    "en-GB",
    "x-private",
    "english!",
    "text/plain",
    "text/html; charset=utf-8",
    "text/",
    "a\x00b",
    "\ud800",
    "héllo",
    [],
    [None],
    ["x"],
    [""],
    [0.6, 0.8],
    [1, True],
    [1, 2, 3],
    [{}],
    {},
    {"a": 1},
    {"a": True},
    {"a": 1.0},
    {"precision": "second"},
    {"start": "1932"},
    {"type": "TextQuoteSelector", "exact": "x"},
    {"type": "TextPositionSelector", "start": 0, "end": 1},
    *WORDS,
]
EXTRA_KEYS = [*WORDS, "unknown", "a/b~c", ""]


def _nudges(value: Any) -> list[Any]:
    """Values next to `value`: one past a bound, or the same value as another JSON type
    (1 and 1.0 and true), where an off-by-one or a type confusion would show."""
    if isinstance(value, bool):
        return [not value, int(value), float(value), str(value).lower()]
    if isinstance(value, int | float):
        near = [value - 1, value + 1, value + 0.5, -value, str(value)]
        if isinstance(value, int) or value.is_integer():  # never nan or inf
            near += [int(value), float(value)]
        if value in (0, 1):
            near.append(bool(value))
        return near
    if isinstance(value, str):
        return [value[:-1], value + value[-1:], value + " ", value.upper(), ""]
    if isinstance(value, list):
        return [value[:-1], value + value[-1:], [*value, value], []]
    if isinstance(value, dict):
        return [{}, {key: item for key, item in list(value.items())[:-1]}]
    return [0, False, ""]


@st.composite
def mutated_values(draw, name: str) -> Any:
    """A seed of `name` with 1-3 replacements, deletions or additions."""
    seeds = SEEDS[name]
    value: Any = copy.deepcopy(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 3))):
        paths = list(mutations.paths(value))
        path = draw(st.sampled_from(paths))
        # An edge value, a subtree of this value or of another seed, or what another
        # seed holds at the same place (a recombination, often still valid).
        other = draw(st.sampled_from(seeds))
        choices = [
            st.sampled_from(EDGE_VALUES),
            st.sampled_from(paths).map(lambda p, v=value: mutations.at(v, p)),
            st.sampled_from(list(mutations.paths(other))).map(
                lambda p, v=other: mutations.at(v, p)
            ),
        ]
        if path and path in set(mutations.paths(other)):
            choices.append(st.just(mutations.at(other, path)))
        choices.append(st.sampled_from(_nudges(mutations.at(value, path))))
        new = copy.deepcopy(draw(st.one_of(*choices)))
        operation = draw(st.sampled_from(["replace", "delete", "add"]))
        target = mutations.at(value, path)
        if operation == "add" and isinstance(target, dict):
            target[draw(st.sampled_from(EXTRA_KEYS))] = new
        elif operation == "add" and isinstance(target, list):
            target.append(new)
        elif not path:
            value = new
        elif operation == "delete":
            del mutations.at(value, path[:-1])[path[-1]]
        else:
            mutations.at(value, path[:-1])[path[-1]] = new
    return value


MUTATIONS = settings(
    max_examples=250, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


# -- the reference --------------------------------------------------------------------

REGISTRY = Registry().with_resources(
    (schema["$id"], Resource.from_contents(schema, default_specification=DRAFT202012))
    for schema in structured._resources().values()
)
FORMAT_CHECKER = reference.format_checker(structured.FORMATS)


def _jsonschema(schema: dict) -> Draft202012Validator:
    return Draft202012Validator(schema, format_checker=FORMAT_CHECKER, registry=REGISTRY)


JSONSCHEMA = {name: _jsonschema(structured._schema(name)) for name in NAMES}


def _agree(ours: Schema, theirs: Draft202012Validator, value: Any) -> None:
    if reference.finite(value):
        assert ours.is_valid(value) == theirs.is_valid(value), value
    elif ours.is_valid(value):
        assert theirs.is_valid(value), value


def _reference_offenders(theirs: Draft202012Validator, value: Any, prefix: str) -> list:
    """The schema offenders _validate named when jsonschema found the errors."""
    found = []
    for failure in reference.best_failures(theirs, value):
        found.extend(structured._offenders_for(failure, "", prefix))
    return found


# -- the shipped schemas -------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_every_shipped_schema_compiles_with_jsonschema_rs(name):
    assert isinstance(structured._validator(name), Schema)


def test_every_shipped_schema_has_seeds_to_mutate():
    assert all(SEEDS[name] for name in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_jsonschema_rs_agrees_with_jsonschema_on_every_seed(name):
    for value in SEEDS[name]:
        _agree(structured._validator(name), JSONSCHEMA[name], value)


@pytest.mark.parametrize("name", NAMES)
@MUTATIONS
@given(data=st.data())
def test_jsonschema_rs_agrees_with_jsonschema_on_mutated_values(name, data):
    value = data.draw(mutated_values(name))
    _agree(structured._validator(name), JSONSCHEMA[name], value)


def _jsonschema_only(name: str, value: Any) -> list:
    """What _validate answered with jsonschema: its errors worded, then the rules."""
    offenders = _reference_offenders(JSONSCHEMA[name], value, "schema")
    rules = SEMANTIC_CHECKS.get(name)
    if rules is not None:
        offenders.extend(rules(value, ""))
    return structured._dedupe(offenders)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=150, derandomize=True, deadline=None)
@given(data=st.data())
def test_validate_names_the_same_offenders_as_jsonschema(name, data):
    value = data.draw(mutated_values(name))
    assume(reference.finite(value))
    assert structured._validate(name, value) == _jsonschema_only(name, value)


def test_nan_and_infinity_are_no_numbers():
    for number in (float("nan"), float("inf"), float("-inf")):
        value = {"metric_ref": "m", "metric_version": "v", "value": number}
        offenders = structured.validate("metric_binding", value)
        assert [(o.pointer, o.code) for o in offenders] == [("/value", "schema.type")]


# -- profile schemas -------------------------------------------------------------------

# Pinned schemas as an adoption profile may write them, using the keywords the
# shipped schemas do not (oneOf, patternProperties, dependentRequired, …).
PROFILES: list[tuple[str, dict]] = [
    (
        "selector",
        {
            "$ref": "urn:grounding:schema:selector@1",
            "properties": {"type": {"enum": ["TextPositionSelector", "TextQuoteSelector"]}},
        },
    ),
    (
        "selector",
        {
            "oneOf": [
                {"required": ["prefix"]},
                {"required": ["suffix"]},
                {"properties": {"type": {"const": "TextPositionSelector"}}},
            ]
        },
    ),
    (
        "selector",
        {
            "properties": {"exact": {"maxLength": 3, "not": {"pattern": "SECRET"}}},
            "dependentRequired": {"prefix": ["suffix"]},
        },
    ),
    (
        "selector",
        {
            "propertyNames": {"pattern": "^[a-zA-Z]+$"},
            "maxProperties": 4,
            "properties": {"start": {"exclusiveMaximum": 100}, "end": {"exclusiveMinimum": 0}},
        },
    ),
    (
        "selector",
        {
            "properties": {
                "refinedBy": {"$ref": "urn:grounding:schema:selector@1#/$defs/TextPositionSelector"}
            }
        },
    ),
    (
        "answer_representation",
        {
            "properties": {"language": {"enum": ["de", "fr", "en"]}},
            "required": ["representation_ref"],
        },
    ),
    (
        "answer_representation",
        {
            "patternProperties": {
                "^(language|media_type)$": {"minLength": 3},
                "^dig": {"required": ["algorithm"]},
            },
            "additionalProperties": {"type": "string", "format": "uri"},
        },
    ),
    (
        "answer_representation",
        {
            "dependentSchemas": {"digest": {"required": ["representation_ref"]}},
            "properties": {"digest": {"properties": {"algorithm": {"const": "sha512"}}}},
        },
    ),
    (
        "uncertainty_binding",
        {
            "properties": {
                "value": {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
                "calibrated": {"const": True},
            }
        },
    ),
    (
        "uncertainty_binding",
        {"properties": {"value": {"enum": [0.7, True, None, "high", [0.6, 0.8]]}}},
    ),
    ("uncertainty_binding", {"properties": {"calibrated": {"const": False}}}),
    # true is not 1: enum and const compare with jsonschema's bool-aware equal().
    ("uncertainty_binding", {"properties": {"calibrated": {"enum": [1, "yes", None, [True]]}}}),
    (
        "applicability_interval",
        {
            "properties": {
                "start": {"format": "date-time"},
                "end": {
                    "$ref": "urn:grounding:schema:applicability_interval@1#/$defs/temporal_point"
                },
            }
        },
    ),
    ("support_limits", {"properties": {"unknown_extent": {"const": {"a": 1}}}}),
    ("support_limits", {"not": {"required": ["contradiction"]}, "maxProperties": 2}),
]


def _canonical(schema: dict) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))


@pytest.mark.parametrize(("name", "profile"), PROFILES)
def test_profile_schemas_using_other_keywords_compile(name, profile):
    assert isinstance(structured._profile_validator(_canonical(profile)), Schema)


@pytest.mark.parametrize(("name", "profile"), PROFILES)
def test_a_profile_schema_agrees_with_jsonschema_on_every_seed(name, profile):
    ours = structured._profile_validator(_canonical(profile))
    theirs = _jsonschema(profile)
    for value in SEEDS[name]:
        _agree(ours, theirs, value)


@pytest.mark.parametrize(("name", "profile"), PROFILES)
@settings(max_examples=120, derandomize=True, deadline=None)
@given(data=st.data())
def test_a_profile_schema_agrees_with_jsonschema(name, profile, data):
    value = data.draw(mutated_values(name))
    _agree(structured._profile_validator(_canonical(profile)), _jsonschema(profile), value)


@pytest.mark.parametrize(("name", "profile"), PROFILES)
@settings(max_examples=60, derandomize=True, deadline=None)
@given(data=st.data())
def test_a_profile_schema_names_the_same_offenders_as_jsonschema(name, profile, data):
    value = data.draw(mutated_values(name))
    assume(reference.finite(value))
    ours = structured._profile_validator(_canonical(profile))
    # _validate compiles the canonical form (members sorted): jsonschema did too.
    theirs = _jsonschema(json.loads(_canonical(profile)))
    expected = structured._dedupe(_reference_offenders(theirs, value, "profile"))
    assert structured._dedupe(structured._schema_offenders(ours, value, "", "profile")) == expected


def test_a_profile_schema_with_unique_items_is_enforced():
    # The keyword the home-made compiler left to jsonschema alone.
    profile = {"properties": {"qualifiers": {"uniqueItems": True}}}
    offenders = structured.validate(
        "claim_scope", {"proposition": "p", "qualifiers": ["a", "a"]}, profile_schema=profile
    )
    assert [(o.pointer, o.code) for o in offenders] == [("/qualifiers", "profile.uniqueItems")]
