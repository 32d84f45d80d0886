"""WSP v3 validation: valid fixtures pass; offenders are collected, located and coded.

The one-broken-twin-per-rule table is in test_wsp_broken_twins.py.
"""

from __future__ import annotations

import pytest

from evidence.wsp import document_error_code, validate_response
from tests.evidence.conftest import load, offenders_of


@pytest.mark.parametrize("name", ["search", "extract", "cache_hit", "aggregate"])
def test_valid_fixture_has_no_offenders(name):
    assert validate_response(load(name)) == []


def test_cache_hit_waives_the_attempt_foreign_key():
    doc = load("cache_hit")
    assert doc["provider_attempts"] == []
    assert doc["observations"][0]["provider_attempt_id"] == "att-origin-7"
    assert validate_response(doc) == []


def test_every_offender_is_collected_not_only_the_first():
    doc = load("search")
    doc["answer"] = "x"
    doc["observations"][2]["provider_attempt_id"] = "att-9"
    doc["policy_actions"][0]["reason"] = "max_results"
    doc["results"][0]["representative_observation_id"] = "obs-9"
    assert sorted(offenders_of(doc)) == [
        ("/answer", "banned_field"),
        ("/observations/2/provider_attempt_id", "fk_unresolved"),
        ("/policy_actions/0/reason", "policy_action_pair"),
        ("/results/0/representative_observation_id", "representative_not_member"),
        ("/results/0/representative_observation_id", "result_ref_unresolved"),
    ]
    assert document_error_code(validate_response(doc)) == "wsp_contract_violation"


def test_only_banned_offenders_make_the_document_code_banned_field():
    doc = load("search")
    doc["answer"] = "x"
    doc["results"][0]["claim"] = {"text": "y"}
    offenders = validate_response(doc)
    assert [(o.pointer, o.code) for o in offenders] == [
        ("/answer", "banned_field"),
        ("/results/0/claim", "banned_field"),
    ]
    assert document_error_code(offenders) == "banned_field"


def test_a_synthesis_object_inside_results_is_only_a_banned_field():
    doc = load("search")
    doc["results"].append({"type": "synthesis", "text": "The bridge opened in 1932."})
    assert offenders_of(doc) == [("/results/2", "banned_field")]


def test_a_document_that_is_not_an_object_is_a_schema_type_offender():
    assert offenders_of(["not", "an", "object"]) == [("", "schema.type")]


def test_required_offenders_point_at_each_missing_member():
    doc = load("search")
    del doc["observations"][0]["url"]
    del doc["observations"][0]["provider"]
    assert offenders_of(doc) == [
        ("/observations/0/provider", "schema.required"),
        ("/observations/0/url", "schema.required"),
    ]


def test_pointers_escape_slash_and_tilde_per_rfc6901():
    doc = load("search")
    doc["observations"][0]["provider_fields"] = {"tavily": {}, "a/b~c": {}}
    assert offenders_of(doc) == [("/observations/0/provider_fields/a~1b~0c", "provider_fields_key")]


def test_offender_detail_never_echoes_source_text():
    doc = load("search")
    doc["observations"][0]["provider_rank"] = "SECRET-SOURCE-TEXT"
    (offender,) = validate_response(doc)
    assert "SECRET-SOURCE-TEXT" not in offender.detail


def test_nul_and_lone_surrogates_are_unstorable_and_never_crash_the_validator():
    doc = load("search")
    doc["observations"][1]["snippet"] = "bad \x00 byte"
    doc["observations"][2]["title"] = "lone \ud800 surrogate"
    doc["routing_receipt"]["k\udc00"] = 1
    assert offenders_of(doc) == [
        ("/observations/1/snippet", "unstorable_character"),
        ("/observations/2/title", "unstorable_character"),
        ("/routing_receipt/k\\udc00", "unstorable_character"),
        # The title the result projects no longer derives from the observation's title.
        ("/results/1/title/text", "projection_source_mismatch"),
    ]
