"""common.kernel.schemas: jsonschema-rs, its failures described as jsonschema's errors.

The shipped schemas are held to jsonschema on mutated values in
tests/grounding/test_structured_against_jsonschema.py and
tests/evidence/test_wsp_against_jsonschema.py; here are the keywords those schemas do
not use, the cases jsonschema-rs needs help with (lone surrogates, jsonschema's order
and best_match) and the documented departures.
"""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match as jsonschema_best_match

from common.kernel.schemas import Schema, SchemaInvalid, best_match, check_schema
from tests import schema_reference as reference


def _described(failures: list) -> list[tuple[str, tuple, Any]]:
    return [(f.keyword, f.path, f.value) for f in failures]


def _same_as_jsonschema(schema: dict, instance: Any, *, ordered: bool = True) -> None:
    ours, theirs = Schema(schema), Draft202012Validator(schema)
    assert ours.is_valid(instance) == theirs.is_valid(instance), instance
    found = _described(ours.failures(instance))
    expected = _described(reference.failures(theirs, instance))
    if not ordered:  # jsonschema walks the extra members of additionalProperties in set order
        found, expected = sorted(found, key=repr), sorted(expected, key=repr)
    assert found == expected


# Keywords the home-made compiler refused (jsonschema validated alone then): all are
# jsonschema-rs's now, with jsonschema's verdicts and failures.
@pytest.mark.parametrize(
    ("schema", "instances"),
    [
        ({"uniqueItems": True}, [[1, 2], [1, 1], [1, True], [[1], [1.0]], [{"a": 1}, {"a": 1}]]),
        (
            {"type": "array", "prefixItems": [{"type": "string"}], "items": False},
            [["a"], ["a", "b"], ["a", "b", "c"], [1]],
        ),
        ({"properties": {"a": {}}, "unevaluatedProperties": False}, [{"a": 1}, {"a": 1, "b": 2}]),
        ({"$ref": "#named", "$defs": {"a": {"$anchor": "named", "type": "string"}}}, ["x", 1]),
        ({"properties": {"a": {"$id": "urn:elsewhere", "type": "string"}}}, [{"a": "x"}, {"a": 1}]),
        (
            {"$defs": {"a": {"$id": "urn:embedded", "type": "integer"}}, "$ref": "urn:embedded"},
            [1, "x"],
        ),
        ({"then": {"type": "string"}}, [1]),
        ({"multipleOf": 0.5}, [1.5, 1.25, 3]),
        (
            {
                "properties": {"a": {}},
                "patternProperties": {"^x": {"type": "string"}},
                "additionalProperties": {"type": "integer"},
            },
            # One failing extra member each: jsonschema walks them in set order.
            [{"b": "s", "xa": 1, "c": 2, "a": None}, {"b": 1, "xa": "s"}],
        ),
        ({"propertyNames": {"pattern": "^[a-z]+$", "maxLength": 3}}, [{"AB": 1, "abcd": 2}]),
        ({"dependentSchemas": {"a": {"required": ["b"]}}}, [{"a": 1}, {"a": 1, "b": 2}]),
        ({"contains": {"type": "string"}}, [[1], ["a"]]),
        (
            {"contains": {"type": "string"}, "minContains": 2, "maxContains": 3},
            [["a"], list("abcd")],
        ),
    ],
)
def test_keywords_the_shipped_schemas_do_not_use_are_validated_as_jsonschema_does(
    schema, instances
):
    for instance in instances:
        _same_as_jsonschema(schema, instance)


def test_failures_come_in_jsonschema_order_not_jsonschema_rs_order():
    schema = {
        "properties": {"a": {"$ref": "#/$defs/text"}, "b": {"type": "integer"}},
        "$defs": {"text": {"type": "string"}},
        "dependentRequired": {"p": ["s"]},
        "additionalProperties": False,
        "required": ["q", "r"],
        "if": {"required": ["p"]},
        "then": {"minProperties": 9},
        "allOf": [{"maxProperties": 1}],
    }
    instance = {"zz": 1, "b": "x", "a": 1, "p": 1}
    assert [(f.keyword, f.path) for f in Schema(schema).failures(instance)] == [
        ("type", ("a",)),
        ("type", ("b",)),
        ("dependentRequired", ()),
        ("additionalProperties", ()),
        ("required", ()),
        ("required", ()),
        ("minProperties", ()),
        ("maxProperties", ()),
    ]
    _same_as_jsonschema(schema, instance)


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        (
            {"anyOf": [{"type": "string"}, {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}]},
            {},
        ),
        (
            {
                "anyOf": [
                    {"properties": {"a": {"type": "string"}}},
                    {"properties": {"a": {"type": "integer", "minimum": 3}}},
                ]
            },
            {"a": 1},
        ),
        ({"oneOf": [{"type": "object", "required": ["x"]}, {"type": "array"}]}, {"y": 1}),
        ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, None),
    ],
)
def test_best_match_picks_what_jsonschema_picks(schema, instance):
    (ours,) = Schema(schema).failures(instance)
    (theirs,) = Draft202012Validator(schema).iter_errors(instance)
    expected = reference.as_failure(jsonschema_best_match([theirs]))
    picked = best_match(ours)
    assert (picked.keyword, picked.path, picked.value) == (
        expected.keyword,
        expected.path,
        expected.value,
    )


def test_a_valid_instance_has_no_failures():
    assert Schema({"type": "object", "required": ["a"]}).failures({"a": 1}) == []


def test_lone_surrogates_are_validated_and_located_under_their_own_names():
    schema = {
        "type": "object",
        "properties": {"k": {"type": "string", "maxLength": 3}},
        "additionalProperties": {"type": "integer"},
    }
    ours = Schema(schema)
    assert ours.is_valid({"k": "a\ud800b", "\udc00x": 1}) is True
    low, other = chr(0xDC00) + "x", chr(0xDC01) + "x"  # distinct names, one stand-in each
    instance = {"k": "\ud800\ud801\ud802\ud803", low: "s", other: "t"}
    assert [(f.keyword, f.path, f.instance) for f in ours.failures(instance)] == [
        ("maxLength", ("k",), "\ud800\ud801\ud802\ud803"),
        ("type", (low,), "s"),
        ("type", (other,), "t"),
    ]
    _same_as_jsonschema(schema, instance, ordered=False)


def test_the_pointer_escapes_member_names():
    (failure,) = Schema({"properties": {"a/b~c": {"type": "string"}}}).failures({"a/b~c": 1})
    assert failure.pointer == "/a~1b~0c"


# -- formats ----------------------------------------------------------------------------


def test_without_formats_format_only_annotates():
    assert Schema({"format": "email"}).is_valid("no at sign") is True


def test_given_formats_replace_jsonschema_rs_checks_and_the_others_are_asserted():
    ours = Schema(
        {"properties": {"d": {"format": "date-time"}, "e": {"format": "email"}}},
        formats={"date-time": lambda text: text == "now"},
    )
    assert ours.is_valid({"d": "now", "e": "a@example.org"}) is True
    assert [(f.keyword, f.path, f.value) for f in ours.failures({"d": "2026-11-30T12:00:00Z"})] == [
        ("format", ("d",), "date-time")
    ]
    assert ours.is_valid({"e": "no at sign"}) is False


# -- compiling and checking schemas ----------------------------------------------------


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "other.json#/$defs/Id"},
        {"$dynamicRef": "#meta"},
        {"type": "decimal"},
        {"pattern": "("},
        {"minLength": -1},
    ],
)
def test_a_schema_jsonschema_rs_cannot_compile_is_refused(schema):
    with pytest.raises(SchemaInvalid):
        Schema(schema)


@pytest.mark.parametrize(
    "ref", ["file:///etc/hostname", "http://127.0.0.1:9/schema.json", "urn:nowhere"]
)
def test_a_ref_outside_the_resources_is_never_retrieved(ref):
    with pytest.raises(SchemaInvalid, match="not present in a registry"):
        Schema({"$ref": ref}, resources={"urn:here": {"type": "string"}})


def test_a_ref_into_the_resources_resolves():
    ours = Schema(
        {"$ref": "urn:here#/$defs/n"}, resources={"urn:here": {"$defs": {"n": {"minimum": 1}}}}
    )
    assert (ours.is_valid(1), ours.is_valid(0)) == (True, False)
    (failure,) = ours.failures(0)
    assert (failure.keyword, failure.schema, failure.value) == ("minimum", {"minimum": 1}, 1)


def test_check_schema_refuses_what_is_no_draft_2020_12_schema():
    for schema in ({"type": "decimal"}, {"pattern": "("}, {"properties": 3}, 5, "x"):
        with pytest.raises(SchemaInvalid):
            check_schema(schema)


def test_check_schema_leaves_references_to_the_caller_s_registry():
    check_schema({"$ref": "urn:grounding:schema:selector@1", "maxProperties": 4})


# -- departures from jsonschema, all towards the specification ----------------------------


@pytest.mark.parametrize(
    ("schema", "instance", "jsonschema_rs", "jsonschema"),
    [
        ({"type": "number"}, float("nan"), False, True),  # NaN and infinities are no JSON numbers
        ({"type": "number"}, float("inf"), False, True),
        ({"multipleOf": 0.1}, 0.3, True, False),  # exact, not 0.3 / 0.1 in binary floating point
        ({"pattern": "^[a-z]+$"}, "en\n", False, True),  # ECMA-262: $ is the end
        ({"pattern": "^\\d+$"}, "\u0661\u0662", False, True),  # ECMA-262: \d is [0-9]
    ],
)
def test_documented_departures_from_jsonschema(schema, instance, jsonschema_rs, jsonschema):
    assert Schema(schema).is_valid(instance) is jsonschema_rs
    assert Draft202012Validator(schema).is_valid(instance) is jsonschema


def test_a_failing_contains_is_named_by_the_bound_given():
    schema = {"contains": {"type": "string"}, "maxContains": 1}
    assert [f.keyword for f in Schema(schema).failures([1])] == ["maxContains"]
    assert [e.validator for e in Draft202012Validator(schema).iter_errors([1])] == ["contains"]


def test_a_false_subschema_fails_at_the_member_it_refuses():
    # jsonschema locates it at the parent object; the member is what is refused.
    (failure,) = Schema({"properties": {"a": False}}).failures({"a": 1})
    assert (failure.keyword, failure.path, failure.schema) == ("false", ("a",), {})


def test_the_holding_subschema_is_found_under_any_member_name():
    schema = {
        "$id": "urn:names",
        "properties": {"a b/c~%é": {"minimum": 1, "x-detail": "d"}},
        "patternProperties": {"^x[0-9]{2}$": {"maxLength": 1}},
    }
    failures = Schema(schema).failures({"a b/c~%é": 0, "x12": "ab"})
    assert [(f.keyword, f.path, f.schema, f.value) for f in failures] == [
        ("minimum", ("a b/c~%é",), {"minimum": 1, "x-detail": "d"}, 1),
        ("maxLength", ("x12",), {"maxLength": 1}, 1),
    ]
