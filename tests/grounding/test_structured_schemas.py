"""The structured-value schemas and their single entry point, grounding.values.structured.validate.

Plain functions: no database is needed.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from common.kernel.refusals import Offender
from grounding.values import structured
from grounding.values.structured import SCHEMA_NAMES, validate

SHA256 = "ab" * 32
SECRET = "TOP-SECRET passage text: Ωmega 𝔘nicode"

EXPECTED_NAMES = {
    "selector",
    "answer_representation",
    "claim_scope",
    "support_scope",
    "support_limits",
    "source_revision_binding",
    "representation_check",
    "anchor_result",
    "time_uncertainty",
    "applicability_interval",
    "metric_binding",
    "coverage_population",
    "uncertainty_binding",
    "loss_report",
    "related_link_refs",
    "recipient_scope",
    "endpoint_role_map",
    "assessed_inputs",
}

# (schema name, realistic valid value). docs/api.md's own examples come first.
VALID = [
    ("selector", {"type": "TextPositionSelector", "start": 10, "end": 58}),
    (
        "selector",
        {
            "type": "TextQuoteSelector",
            "exact": "opened in 1932",
            "prefix": "The bridge ",
            "suffix": ".",
        },
    ),
    ("answer_representation", {"language": "en", "media_type": "text/plain"}),
    ("claim_scope", {"proposition": "The bridge opened in 1932."}),
    ("support_scope", {"covers": "opening year"}),
    ("time_uncertainty", {"asserted_at": "second"}),
    # selectors
    ("selector", {"type": "TextQuoteSelector", "exact": "1932"}),
    ("selector", {"type": "TextPositionSelector", "start": 0, "end": 0}),
    (
        "selector",
        {
            "type": "FragmentSelector",
            "value": "page=3",
            "conformsTo": "http://tools.ietf.org/rfc/rfc3778",
        },
    ),
    ("selector", {"type": "DataPositionSelector", "start": 4096, "end": 4200}),
    (
        "selector",
        {
            "type": "RangeSelector",
            "startSelector": {"type": "TextQuoteSelector", "exact": "The bridge"},
            "endSelector": {"type": "TextQuoteSelector", "exact": "1932."},
        },
    ),
    (
        "selector",
        {
            "type": "WspSegmentSelector",
            "segment": 2,
            "field": "text",
            "observation_id": "obs-01J9",
            "refinedBy": {"type": "TextPositionSelector", "start": 3, "end": 17},
        },
    ),
    (
        "selector",
        {
            "type": "FragmentSelector",
            "value": "xpointer(/doc/p[2])",
            "refinedBy": {"type": "TextQuoteSelector", "exact": "opened", "prefix": ""},
        },
    ),
    # the rest
    (
        "answer_representation",
        {
            "language": "zh-Hant-TW",
            "media_type": "text/html; charset=utf-8",
            "representation_ref": "urn:answer:42@2#html",
            "digest": {"algorithm": "sha256", "value": SHA256},
        },
    ),
    (
        "claim_scope",
        {
            "proposition": "The Sydney Harbour Bridge opened in 1932.",
            "qualifiers": ["to road traffic"],
            "time": {"start": "1932-03", "end": "1932-03-19T10:00:00+10:00"},
            "exclusions": ["construction start date"],
            "context_ref": "urn:answer:42#p1",
        },
    ),
    ("claim_scope", {"proposition": "It is open.", "time": "as of 2026"}),
    (
        "support_scope",
        {
            "covers": {"proposition": "The bridge opened in 1932.", "qualifiers": ["year"]},
            "limits": ["the day is not stated"],
        },
    ),
    ("support_limits", {"missing_premise": ["bridge identity"], "unknown_extent": True}),
    ("support_limits", {"unsupported_qualifiers": ["to road traffic"], "contradiction": "p4"}),
    (
        "source_revision_binding",
        {
            "source_ref": "https://example.org/bridge",
            "revision": "2026-11-30T12:00:00Z",
            "media_type": "text/html",
            "language": "en-AU",
        },
    ),
    ("source_revision_binding", {"source_ref": "urn:src:7", "version_state": "unknown"}),
    ("source_revision_binding", {"source_ref": "urn:src:7", "revision": 3}),
    (
        "representation_check",
        {
            "digest": {
                "algorithm": "sha256",
                "value": SHA256,
                "covered": {"unit": "utf8-bytes", "start": 0, "end": 1200},
            }
        },
    ),
    (
        "representation_check",
        {"validator": {"kind": "etag", "value": '"5f3a"', "strength": "strong"}},
    ),
    (
        "anchor_result",
        {
            "status": "resolved",
            "match_count": 1,
            "matches": [{"start": 11, "end": 25}],
            "resolver_ref": "urn:resolver:builtin@1",
            "text_sha256": SHA256,
        },
    ),
    (
        "anchor_result",
        {
            "status": "ambiguous",
            "match_count": 2,
            "matches": [{"start": 11, "end": 25}, {"start": 90, "end": 104}],
            "resolver_ref": "urn:resolver:builtin@1",
            "text_sha256": SHA256,
        },
    ),
    (
        "anchor_result",
        {
            "status": "unresolved",
            "match_count": 0,
            "matches": [],
            "resolver_ref": "urn:resolver:builtin@1",
            "reason": "unavailable",
        },
    ),
    (
        "time_uncertainty",
        {
            "observed_at": {"precision": "second", "clock_uncertainty_seconds": 0.5},
            "assessed_at": "minute",
            "review_due": "day",
            "applicability_interval": "year",
        },
    ),
    ("time_uncertainty", {}),
    ("applicability_interval", {"state": "unknown"}),
    ("applicability_interval", {"state": "known", "start": "1932-03-19", "end": "2026"}),
    (
        "applicability_interval",
        {"state": "bounded", "start": "1932-03-19T00:00:00Z", "end": "1932-03-19T00:00:00Z"},
    ),
    (
        "metric_binding",
        {
            "metric_ref": "urn:metric:citation-precision",
            "metric_version": "2.1",
            "value": 0.82,
            "scale": "0..1",
            "observation_ref": "urn:eval:run-7",
        },
    ),
    (
        "metric_binding",
        {"metric_ref": "urn:metric:grade", "metric_version": "1", "value": "B", "units": "grade"},
    ),
    (
        "coverage_population",
        {
            "claim_inventory_revision_ref": "urn:inventory:42@2",
            "numerator": 7,
            "denominator": 9,
            "excluded_items": [
                "urn:answer:42#s9",
                {"item_ref": "urn:answer:42#s1", "reason": "greeting"},
            ],
            "counting_rule_ref": "urn:rule:count-statements@1",
        },
    ),
    (
        "uncertainty_binding",
        {
            "kind": "probability",
            "value": 0.7,
            "calibrated": True,
            "calibration_set_ref": "urn:cal:set-3",
            "limits": "in-domain English answers only",
        },
    ),
    ("uncertainty_binding", {"kind": "score", "value": 0.7, "calibrated": False}),
    (
        "uncertainty_binding",
        {"kind": "confidence_interval", "value": [0.6, 0.8], "calibrated": False},
    ),
    ("loss_report", []),
    (
        "loss_report",
        [
            {"distinction": "use_basis", "disposition": "disclose-loss", "detail": "no slot"},
            {"distinction": "support_kind", "disposition": "retain-extension"},
        ],
    ),
    ("related_link_refs", []),
    (
        "related_link_refs",
        [{"grounding_ref": "urn:grounding:01J9", "relation": "supersedes", "reason": "rebound"}],
    ),
    ("recipient_scope", {"recipient": "partner:acme", "purpose": "citation-display"}),
    ("endpoint_role_map", {"statement": "target", "passage": "body"}),
    ("endpoint_role_map", {"statement": "body", "passage": "target"}),
    ("assessed_inputs", {"grounding_revision": 1}),
    (
        "assessed_inputs",
        {
            "grounding_revision": 3,
            "statement_binding": "0193f1c2-7a2b-7c1f-9afa-597a2b000001",
            "passage_binding": "0193f1c2-7a2b-7c1f-9afa-597a2b000002",
            "evidence_set_ref": "urn:set:9",
            "evidence_set_revision": 2,
        },
    ),
]

# (schema name, broken twin, the one pointer, the one code).
BROKEN = [
    ("selector", {"type": "TextPositionSelector", "start": 10}, "/end", "schema.required"),
    (
        "selector",
        {"type": "TextPositionSelector", "start": 58, "end": 10},
        "/end",
        "selector.range_inverted",
    ),
    ("selector", {"type": "TextQuoteSelector", "exact": ""}, "/exact", "schema.minLength"),
    (
        "selector",
        {"type": "TextQuoteSelector", "exact": "1932", "quote": "x"},
        "/quote",
        "schema.additionalProperties",
    ),
    (
        "selector",
        {"type": "TextQuoteSelector", "exact": "1932", "prefix": 3},
        "/prefix",
        "schema.type",
    ),
    ("selector", {"type": "Highlighter", "exact": "1932"}, "/type", "schema.enum"),
    ("selector", {"exact": "1932"}, "/type", "schema.required"),
    ("selector", ["TextQuoteSelector"], "", "schema.type"),
    (
        "selector",
        {"type": "FragmentSelector", "value": "page=3", "conformsTo": "no scheme here"},
        "/conformsTo",
        "schema.format",
    ),
    (
        "selector",
        {"type": "DataPositionSelector", "start": -1, "end": 4},
        "/start",
        "schema.minimum",
    ),
    (
        "selector",
        {
            "type": "RangeSelector",
            "startSelector": {"type": "TextQuoteSelector", "exact": "The"},
            "endSelector": {"type": "Nope"},
        },
        "/endSelector/type",
        "schema.enum",
    ),
    (
        "selector",
        {"type": "WspSegmentSelector", "segment": 1, "field": "body"},
        "/field",
        "schema.enum",
    ),
    (
        "selector",
        {
            "type": "WspSegmentSelector",
            "segment": 1,
            "refinedBy": {"type": "TextPositionSelector", "start": "0", "end": 4},
        },
        "/refinedBy/start",
        "schema.type",
    ),
    (
        "answer_representation",
        {"language": "english!", "media_type": "text/plain"},
        "/language",
        "schema.pattern",
    ),
    ("answer_representation", {"language": "en"}, "/media_type", "schema.required"),
    (
        "answer_representation",
        {
            "language": "en",
            "media_type": "text/plain",
            "digest": {"algorithm": "sha256", "value": "ab" * 31},
        },
        "/digest/value",
        "schema.pattern",
    ),
    ("claim_scope", {"qualifiers": ["in 1932"]}, "/proposition", "schema.required"),
    (
        "claim_scope",
        {"proposition": "p", "time": {"start": "1932-3"}},
        "/time/start",
        "schema.anyOf",
    ),
    (
        "claim_scope",
        {"proposition": "p", "time": {"start": "2026-02-30T12:00:00Z"}},
        "/time/start",
        "schema.anyOf",
    ),
    ("claim_scope", {"proposition": "p", "qualifiers": [""]}, "/qualifiers/0", "schema.minLength"),
    ("support_scope", {"covers": ""}, "/covers", "schema.minLength"),
    ("support_scope", {"covers": 1932}, "/covers", "schema.type"),
    ("support_scope", {"limits": ["x"]}, "/covers", "schema.required"),
    ("support_limits", {}, "", "schema.minProperties"),
    (
        "support_limits",
        {"unsupported_qualifiers": []},
        "/unsupported_qualifiers",
        "schema.minItems",
    ),
    ("source_revision_binding", {"source_ref": "urn:src:7"}, "/version_state", "schema.required"),
    (
        "source_revision_binding",
        {"source_ref": "urn:src:7", "version_state": "known"},
        "/version_state",
        "schema.const",
    ),
    (
        "source_revision_binding",
        {"source_ref": "urn:src:7", "revision": "r2", "version_state": "unknown"},
        "/version_state",
        "schema.not",
    ),
    ("representation_check", {}, "", "schema.minProperties"),
    (
        "representation_check",
        {"validator": {"kind": "etag", "value": '"5f3a"', "strength": "medium"}},
        "/validator/strength",
        "schema.enum",
    ),
    (
        "representation_check",
        {
            "digest": {
                "algorithm": "sha256",
                "value": SHA256,
                "covered": {"unit": "utf8-bytes", "start": 50, "end": 10},
            }
        },
        "/digest/covered/end",
        "representation_check.range_inverted",
    ),
    (
        "anchor_result",
        {
            "status": "resolved",
            "match_count": 2,
            "matches": [{"start": 1, "end": 2}, {"start": 5, "end": 6}],
            "resolver_ref": "r",
            "text_sha256": SHA256,
        },
        "/match_count",
        "schema.const",
    ),
    (
        "anchor_result",
        {
            "status": "resolved",
            "match_count": 1,
            "matches": [{"start": 1, "end": 2}],
            "resolver_ref": "r",
            "text_sha256": SHA256.upper(),
        },
        "/text_sha256",
        "schema.pattern",
    ),
    (
        "anchor_result",
        {
            "status": "ambiguous",
            "match_count": 3,
            "matches": [{"start": 1, "end": 2}, {"start": 5, "end": 6}],
            "resolver_ref": "r",
            "text_sha256": SHA256,
        },
        "/match_count",
        "anchor_result.match_count_mismatch",
    ),
    ("time_uncertainty", {"asserted_at": "seconds"}, "/asserted_at", "schema.enum"),
    (
        "time_uncertainty",
        {"observed_at": {"clock_uncertainty_seconds": 1}},
        "/observed_at/precision",
        "schema.required",
    ),
    ("time_uncertainty", {"published_at": "day"}, "/published_at", "schema.additionalProperties"),
    ("applicability_interval", {"state": "bounded"}, "", "schema.anyOf"),
    ("applicability_interval", {"state": "unknown", "end": "2026"}, "/end", "schema.not"),
    (
        "applicability_interval",
        {"state": "known", "start": "1933", "end": "1932-05"},
        "/end",
        "applicability_interval.range_inverted",
    ),
    (
        "metric_binding",
        {"metric_ref": "m", "metric_version": "1", "value": 0.8, "threshold": 0.5},
        "/threshold",
        "schema.additionalProperties",
    ),
    (
        "metric_binding",
        {"metric_ref": "m", "metric_version": "1", "value": True},
        "/value",
        "schema.type",
    ),
    (
        "coverage_population",
        {
            "claim_inventory_revision_ref": "i",
            "numerator": 10,
            "denominator": 9,
            "counting_rule_ref": "c",
        },
        "/numerator",
        "coverage_population.numerator_exceeds_denominator",
    ),
    (
        "coverage_population",
        {
            "claim_inventory_revision_ref": "i",
            "numerator": 0,
            "denominator": -1,
            "counting_rule_ref": "c",
        },
        "/denominator",
        "schema.minimum",
    ),
    (
        "uncertainty_binding",
        {"kind": "probability", "value": 0.7, "calibrated": False},
        "/kind",
        "schema.not",
    ),
    (
        "uncertainty_binding",
        {"kind": "probability", "calibrated": True},
        "/calibration_set_ref",
        "schema.required",
    ),
    (
        "loss_report",
        [{"distinction": "use_basis", "disposition": "drop"}],
        "/0/disposition",
        "schema.enum",
    ),
    ("loss_report", {"distinction": "use_basis"}, "", "schema.type"),
    (
        "related_link_refs",
        [{"grounding_ref": "urn:grounding:1", "relation": "equivalent", "reason": ""}],
        "/0/reason",
        "schema.minLength",
    ),
    ("recipient_scope", {"recipient": "partner:acme"}, "/purpose", "schema.required"),
    ("endpoint_role_map", {"statement": "target", "passage": "target"}, "/passage", "schema.const"),
    ("endpoint_role_map", {"statement": "subject", "passage": "body"}, "/statement", "schema.enum"),
    ("assessed_inputs", {"grounding_revision": 0}, "/grounding_revision", "schema.minimum"),
    ("assessed_inputs", {"grounding_revision": "1"}, "/grounding_revision", "schema.type"),
]


def _pairs(offenders: list[Offender]) -> list[tuple[str, str]]:
    return [(o.pointer, o.code) for o in offenders]


# -- the schema files ------------------------------------------------------------------


def test_schema_names_are_the_registry_structured_values():
    assert SCHEMA_NAMES == EXPECTED_NAMES


@pytest.mark.parametrize("name", sorted(EXPECTED_NAMES))
def test_each_schema_file_is_draft_2020_12_with_a_versioned_urn_id(name):
    path = structured.SCHEMA_DIR / f"{name}.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"urn:grounding:schema:{name}@1"
    Draft202012Validator.check_schema(schema)


def test_every_schema_has_valid_and_broken_examples_here():
    assert {name for name, _ in VALID} == EXPECTED_NAMES
    assert {name for name, *_ in BROKEN} == EXPECTED_NAMES


def test_unknown_name_is_a_key_error():
    with pytest.raises(KeyError):
        validate("no_such_value", {})


# -- examples ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"), VALID, ids=[f"{n}-{i}" for i, (n, _) in enumerate(VALID)]
)
def test_realistic_value_is_accepted(name, value):
    assert validate(name, value) == []


@pytest.mark.parametrize(
    ("name", "value", "pointer", "code"),
    BROKEN,
    ids=[f"{b[0]}-{b[3]}-{i}" for i, b in enumerate(BROKEN)],
)
def test_broken_twin_is_refused_at_the_exact_pointer_with_the_exact_code(
    name, value, pointer, code
):
    offenders = validate(name, value)
    assert _pairs(offenders) == [(pointer, code)]
    assert all(o.detail for o in offenders)


def test_pointer_argument_prefixes_every_offender():
    offenders = validate(
        "selector",
        {"type": "TextPositionSelector", "start": 9, "end": 3, "extra": 1},
        pointer="/anchor/source_selector",
    )
    assert _pairs(offenders) == [
        ("/anchor/source_selector/extra", "schema.additionalProperties"),
        ("/anchor/source_selector/end", "selector.range_inverted"),
    ]


def test_pointer_tokens_are_escaped_per_rfc_6901():
    offenders = validate("recipient_scope", {"recipient": "r", "purpose": "p", "a/b~c": 1})
    assert _pairs(offenders) == [("/a~1b~0c", "schema.additionalProperties")]


def test_all_errors_are_collected_not_just_the_first():
    offenders = validate("anchor_result", {"status": "maybe", "match_count": -1, "matches": "none"})
    assert set(_pairs(offenders)) == {
        ("/status", "schema.enum"),
        ("/match_count", "schema.minimum"),
        ("/matches", "schema.type"),
        ("/resolver_ref", "schema.required"),
    }


def test_inverted_ranges_are_found_inside_refinements_and_range_members():
    selector = {
        "type": "RangeSelector",
        "startSelector": {"type": "DataPositionSelector", "start": 8, "end": 2},
        "endSelector": {"type": "TextPositionSelector", "start": 1, "end": 2},
        "refinedBy": {
            "type": "TextQuoteSelector",
            "exact": "x",
            "refinedBy": {"type": "TextPositionSelector", "start": 5, "end": 4},
        },
    }
    assert _pairs(validate("selector", selector)) == [
        ("/startSelector/end", "selector.range_inverted"),
        ("/refinedBy/refinedBy/end", "selector.range_inverted"),
    ]


def _refined_chain(levels: int) -> dict:
    selector: dict = {"type": "TextPositionSelector", "start": 0, "end": 1}
    for _ in range(levels - 1):
        selector = {"type": "TextQuoteSelector", "exact": "x", "refinedBy": selector}
    return selector


def test_nesting_up_to_the_depth_limit_is_validated():
    assert validate("selector", _refined_chain(structured.MAX_DEPTH)) == []


def test_nesting_beyond_the_depth_limit_is_one_offender_not_a_crash():
    offenders = validate("selector", _refined_chain(5000), pointer="/anchor/source_selector")
    assert len(offenders) == 1
    [offender] = offenders
    assert offender.code == "value.too_deep"
    assert offender.pointer == "/anchor/source_selector" + "/refinedBy" * structured.MAX_DEPTH


def test_date_time_format_is_asserted():
    ok = {"state": "known", "start": "2026-11-30T12:00:00.123+11:00"}
    assert validate("applicability_interval", ok) == []
    bad = {"state": "known", "start": "2026-11-30 12:00"}
    assert _pairs(validate("applicability_interval", bad)) == [("/start", "schema.anyOf")]


# -- details never echo the value ----------------------------------------------------------

SECRET_CASES = [
    ("selector", {"type": SECRET}),
    ("selector", {"type": "TextQuoteSelector", "exact": "ok", SECRET: SECRET}),
    ("selector", {"type": "TextQuoteSelector", "exact": "ok", "prefix": [SECRET]}),
    ("selector", {"type": "FragmentSelector", "value": "v", "conformsTo": SECRET}),
    ("answer_representation", {"language": SECRET, "media_type": SECRET}),
    ("claim_scope", {"proposition": "p", "time": {"start": SECRET}}),
    ("anchor_result", {"status": SECRET, "match_count": 0, "matches": [], "resolver_ref": "r"}),
    ("metric_binding", {"metric_ref": "m", "metric_version": "1", "value": [SECRET]}),
    ("endpoint_role_map", {"statement": "target", "passage": SECRET}),
    ("uncertainty_binding", {"kind": SECRET, "calibrated": SECRET}),
    ("support_limits", {"unknown_extent": {"note": SECRET}}),
]


@pytest.mark.parametrize(("name", "value"), SECRET_CASES)
def test_offender_details_never_echo_the_offending_value(name, value):
    offenders = validate(name, value)
    assert offenders
    for o in offenders:
        assert "SECRET" not in o.detail
        assert "passage text" not in o.detail


def test_profile_offender_details_never_echo_the_offending_value():
    profile = {"properties": {"exact": {"maxLength": 3, "not": {"pattern": "SECRET"}}}}
    offenders = validate(
        "selector", {"type": "TextQuoteSelector", "exact": SECRET}, profile_schema=profile
    )
    assert {o.code for o in offenders} == {"profile.maxLength", "profile.not"}
    assert all("SECRET" not in o.detail for o in offenders)


# -- adoption profile schemas ------------------------------------------------------------


def test_profile_schema_errors_are_prefixed_profile():
    profile = {
        "properties": {"language": {"enum": ["de", "fr"]}},
        "required": ["representation_ref"],
    }
    offenders = validate(
        "answer_representation",
        {"language": "en", "media_type": "text/plain"},
        pointer="/statement/answer_representation",
        profile_schema=profile,
    )
    assert _pairs(offenders) == [
        ("/statement/answer_representation/language", "profile.enum"),
        ("/statement/answer_representation/representation_ref", "profile.required"),
    ]


def test_profile_schema_does_not_replace_the_base_schema():
    profile = {"properties": {"language": {"const": "en"}}}
    offenders = validate("answer_representation", {"language": "de"}, profile_schema=profile)
    assert _pairs(offenders) == [
        ("/media_type", "schema.required"),
        ("/language", "profile.const"),
    ]


def test_profile_schema_may_reference_the_base_schema_by_id():
    profile = {
        "$ref": "urn:grounding:schema:selector@1",
        "properties": {"type": {"enum": ["TextPositionSelector"]}},
    }
    quote = {"type": "TextQuoteSelector", "exact": "1932"}
    assert _pairs(validate("selector", quote, profile_schema=profile)) == [
        ("/type", "profile.enum")
    ]
    assert (
        validate(
            "selector",
            {"type": "TextPositionSelector", "start": 0, "end": 1},
            profile_schema=profile,
        )
        == []
    )


def test_one_of_failure_names_the_deepest_failing_member():
    profile = {
        "oneOf": [
            {"required": ["representation_ref"]},
            {
                "properties": {"digest": {"properties": {"algorithm": {"const": "sha512"}}}},
                "required": ["digest"],
            },
        ]
    }
    value = {
        "language": "en",
        "media_type": "text/plain",
        "digest": {"algorithm": "sha256", "value": SHA256},
    }
    assert _pairs(validate("answer_representation", value, profile_schema=profile)) == [
        ("/digest/algorithm", "profile.const")
    ]


# -- properties ----------------------------------------------------------------------------

offsets = st.integers(min_value=0, max_value=2**53)


@given(a=offsets, b=offsets)
def test_text_position_selector_with_ordered_offsets_is_valid(a, b):
    start, end = min(a, b), max(a, b)
    assert validate("selector", {"type": "TextPositionSelector", "start": start, "end": end}) == []


@given(a=offsets, b=offsets)
def test_text_position_selector_with_inverted_offsets_has_exactly_one_offender(a, b):
    if a == b:
        b += 1
    start, end = max(a, b), min(a, b)
    offenders = validate(
        "selector",
        {"type": "TextPositionSelector", "start": start, "end": end},
        pointer="/statement/answer_selector",
    )
    assert _pairs(offenders) == [("/statement/answer_selector/end", "selector.range_inverted")]


@given(
    exact=st.text(min_size=1),
    prefix=st.none() | st.text(),
    suffix=st.none() | st.text(),
)
def test_any_unicode_quote_is_a_valid_text_quote_selector(exact, prefix, suffix):
    selector = {"type": "TextQuoteSelector", "exact": exact}
    if prefix is not None:
        selector["prefix"] = prefix
    if suffix is not None:
        selector["suffix"] = suffix
    assert validate("selector", selector) == []


@given(exact=st.text(alphabet=st.characters(min_codepoint=0x10000), min_size=1))
def test_astral_only_quote_is_valid(exact):
    assert validate("selector", {"type": "TextQuoteSelector", "exact": exact}) == []


KNOWN_TYPES = {
    "TextQuoteSelector",
    "TextPositionSelector",
    "FragmentSelector",
    "DataPositionSelector",
    "RangeSelector",
    "WspSegmentSelector",
}
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=12,
)
unknown_types = st.text().filter(lambda t: t not in KNOWN_TYPES) | (
    json_values.filter(lambda v: not isinstance(v, str))
)


@given(body=st.dictionaries(st.text(), json_values, max_size=6), selector_type=unknown_types)
def test_any_object_with_an_unknown_type_is_refused(body, selector_type):
    value = {**body, "type": selector_type}
    offenders = validate("selector", value)
    assert offenders
    assert ("/type", "schema.enum") in _pairs(offenders)
