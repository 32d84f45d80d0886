"""Regressions of what `make schemathesis` found (issue 26 item 5), continued
(test_schemathesis_findings.py holds the earlier ones): the from-citations payload
per format, and the rules across a body's members (generation evidence, a change
notification's subject) the schema now states. Each is a request the served schema
admits and the server accepts, or one the server refuses and the schema refuses too,
or a refusal declared beyond the schema with its offender pointer."""

from __future__ import annotations

import copy

import pytest

from tests import factories
from tests.api.helpers import assess, client_for, problem, register, register_body
from tests.api.test_schemathesis_findings import _admits, _component
from tests.citations.helpers import URL, load, openai_body
from tests.schemathesis_run.hooks import _beyond_schema

FIXTURES = {
    "anthropic-messages": "anthropic_messages.json",
    "openai-responses": "openai_responses.json",
    "gemini-generate-content": "gemini_generate_content.json",
    "crw-extract": "crw_extract.json",
    "crw-search": "crw_search.json",
}


def _request(world, fmt: str, **overrides) -> dict:
    body = openai_body(world, format=fmt, passages={})
    body["payload"] = load(FIXTURES[fmt])
    return {**body, **overrides}


def _offenders(response, status: int = 400) -> list[tuple[str, str]]:
    body = problem(response, status, "validation_error")
    return [(o["pointer"], o["code"]) for o in body["offenders"]]


@pytest.mark.parametrize("fmt", sorted(FIXTURES))
def test_each_format_s_provider_response_is_admitted_and_accepted(world, fmt):
    """The payload is one variant per `format` now; each fixture (a response as the
    provider returned it) is schema-valid and taken (no passage mapped: 200, every
    citation reported skipped)."""
    body = _request(world, fmt)
    assert _admits(_component("FromCitationsRequest"), body)
    response = client_for(world.curator).post(URL, body, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["format"] == fmt
    assert response.json()["created"] == 0


def test_an_empty_crw_search_payload_is_refused_and_the_schema_says_so(world):
    """Sent as schema-valid (`payload: {}` for crw-search) and refused: answer and
    sources are required."""
    body = _request(world, "crw-search", payload={})
    assert not _admits(_component("FromCitationsRequest"), body)
    response = client_for(world.curator).post(URL, body, format="json")
    assert _offenders(response) == [
        ("/payload/answer", "required"),
        ("/payload/sources", "required"),
    ]


@pytest.mark.parametrize("where", ["name", "value"])
def test_u0000_in_a_payload_member_the_parser_does_not_read_is_refused_by_both(world, where):
    """Sent as schema-valid (a member name with U+0000 deep in `payload`, which was
    any object): refused unstorable_character. An open member is a JsonValue now."""
    payload = load(FIXTURES["anthropic-messages"])
    payload["usage"] = {"a\x00b": 1} if where == "name" else {"note": ["a\x00b"]}
    body = _request(world, "anthropic-messages", payload=payload)
    assert not _admits(_component("FromCitationsRequest"), body)
    payload["usage"] = {"ab": 1} if where == "name" else {"note": ["ab"]}
    assert _admits(_component("FromCitationsRequest"), body)
    payload["usage"] = {"a\x00b": 1} if where == "name" else {"note": ["a\x00b"]}
    response = client_for(world.curator).post(URL, body, format="json")
    pointer = "/payload/usage/a\x00b" if where == "name" else "/payload/usage/note/0"
    assert _offenders(response) == [(pointer, "unstorable_character")]


def test_an_offset_past_the_text_is_a_rule_beyond_the_schema_under_payload(world):
    """What JSON Schema cannot state of a payload (an offset against the length of
    its text) is refused with `offset` under /payload, which the run's check admits;
    the same code elsewhere is not admitted."""
    payload = load(FIXTURES["openai-responses"])
    annotation = payload["output"][1]["content"][0]["annotations"][0]
    annotation["start_index"], annotation["end_index"] = 0, 10**6
    body = _request(world, "openai-responses", payload=payload)
    assert _admits(_component("FromCitationsRequest"), body)
    response = client_for(world.curator).post(URL, body, format="json")
    offenders = problem(response, 400, "validation_error")["offenders"]
    assert [(o["pointer"], o["code"]) for o in offenders] == [
        ("/payload/output/1/content/0/annotations/0/end_index", "offset")
    ]
    assert all(_beyond_schema(o) for o in offenders)
    assert not _beyond_schema({"pointer": "/language", "code": "offset"})


def test_a_crw_basis_breaking_its_status_contract_is_refused_by_both(world):
    payload = load(FIXTURES["crw-extract"])
    broken = copy.deepcopy(payload)
    supported = next(i for i, b in enumerate(broken["basis"]) if b["status"] == "supported")
    broken["basis"][supported]["citations"] = []
    body = _request(world, "crw-extract", payload=broken)
    assert not _admits(_component("FromCitationsRequest"), body)
    response = client_for(world.curator).post(URL, body, format="json")
    assert _offenders(response) == [(f"/payload/basis/{supported}/citations", "basis_contract")]


def test_a_language_is_judged_up_front_whether_or_not_a_citation_maps(world):
    """With no passage mapped no link is built, and an invalid language was taken
    (200) although it refuses the same request once a citation maps: now refused
    either way, and the schema states the answer representation's pattern."""
    body = _request(world, "openai-responses", language="not a tag")
    assert not _admits(_component("FromCitationsRequest"), body)
    response = client_for(world.curator).post(URL, body, format="json")
    assert _offenders(response) == [("/language", "schema.pattern")]
    assert _admits(_component("FromCitationsRequest"), {**body, "language": "en-GB"})


def test_generation_input_without_its_evidence_is_refused_by_both_in_from_citations(world):
    body = _request(world, "openai-responses", use_basis="generation_input")
    assert not _admits(_component("FromCitationsRequest"), body)
    response = client_for(world.curator).post(URL, body, format="json")
    assert _offenders(response) == [("/generation_evidence_ref", "generation_evidence_required")]
    named = {**body, "generation_evidence_ref": "urn:trace:run-9"}
    assert _admits(_component("FromCitationsRequest"), named)
    assert client_for(world.curator).post(URL, named, format="json").status_code == 200


def test_bulk_generation_input_without_its_evidence_is_refused_by_both(world):
    """Sent as schema-valid in a bulk item and refused generation_evidence_required."""
    item = register_body(world)
    item["support"]["use_basis"] = "generation_input"
    bulk = {"items": [item]}
    assert not _admits(_component("BulkRegisterRequest"), bulk)
    response = client_for(world.curator).post("/api/v1/groundings/bulk/", bulk, format="json")
    assert _offenders(response) == [
        ("/items/0/support/generation_evidence_ref", "generation_evidence_required")
    ]
    item["support"]["generation_evidence_ref"] = "urn:trace:run-9"
    assert _admits(_component("BulkRegisterRequest"), bulk)
    response = client_for(world.curator).post("/api/v1/groundings/bulk/", bulk, format="json")
    assert response.status_code == 201, response.content


SUBJECTS = [
    ("source", "no-scheme", False),
    ("source", "http:no-host", False),
    ("source", "HTTPS://", False),
    ("source", "https://example.org/a", True),
    ("source", "urn:grounding:passage:p1", True),
    ("answer", "urn:answer:" + "x" * 600, False),
    ("answer", "urn:answer:1", True),
]


@pytest.mark.parametrize(("kind", "subject", "accepted"), SUBJECTS)
def test_a_change_notification_s_subject_has_its_kind_s_shape_in_both(
    world, kind, subject, accepted
):
    body = {
        "dimension": world.dimension.name, "change_ref": "urn:change:1", "kind": kind,
        "subject_ref": subject, "observed_at": "2026-12-01T09:00:00Z", "reason": "changed",
    }  # fmt: skip
    assert _admits(_component("ChangeNotificationCreateRequest"), body) is accepted
    response = client_for(world.curator).post("/api/v1/change-notifications/", body, format="json")
    if accepted:
        assert response.status_code == 201, response.content
    else:
        assert _offenders(response) == [("/subject_ref", "subject_shape")]


def test_u0000_in_an_excluded_item_is_refused_by_both(world):
    """A coverage population's excluded item is a reference or an object: its text is
    storable text in the schema too (the stateful phase sent a U+0000 there)."""
    link = register(world)
    population = {
        "claim_inventory_revision_ref": "urn:inventory:7@1",
        "numerator": 1,
        "denominator": 2,
        "excluded_items": ["urn:claim:1", "urn:claim:\u00002"],
        "counting_rule_ref": "urn:rule:count@1",
    }
    body = factories.assessment_body(1, coverage_population=population)
    assert not _admits(_component("AssessmentRequest"), body)
    response = assess(world, link["grounding_id"], 1, coverage_population=population)
    assert _offenders(response) == [
        ("/coverage_population/excluded_items/1", "unstorable_character")
    ]
    population["excluded_items"][1] = "urn:claim:2"
    assert _admits(_component("AssessmentRequest"), body)
    assert assess(world, link["grounding_id"], 1, coverage_population=population).status_code == 201


@pytest.mark.parametrize("instant", ["2521-04-18T01:01:08.8509+22:09", "3540-01-01T00:00:00-23:59"])
def test_an_instant_with_any_rfc3339_offset_is_taken(world, instant):
    """RFC 3339 offsets go to ±23:59, PostgreSQL's input to ±15:59: the stateful phase's
    `observed_before=…+22:09` was a 400 "cannot store". Instants reach the database
    in UTC."""
    client = client_for(world.curator)
    response = client.get("/api/v1/change-notifications/", {"observed_before": instant})
    assert response.status_code == 200, response.content
    assert response.json()["results"] == []
