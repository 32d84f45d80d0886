"""POST /api/v1/groundings/from-citations/ with a Gemini GenerateContentResponse:
one candidate link per grounding support and chunk index, the answer span from
UTF-8 byte offsets, the source side a locator only. Confidence scores are data."""

from __future__ import annotations

import copy

import pytest
from rest_framework.test import APIClient

from grounding.models import GroundingLink
from policies.models import AuditEvent
from tests import factories
from tests.citations.helpers import URL, external, load

pytestmark = [
    pytest.mark.urls("tests.citations.urls"),
    pytest.mark.django_db,
    pytest.mark.usefixtures("fresh_throttle"),
]


def body(world, **overrides) -> dict:
    out = {
        "dimension": world.dimension.name,
        "profile": world.profile.ref,
        "answer_revision_ref": "urn:answer:gemini@1",
        "format": "gemini-generate-content",
        "payload": load("gemini_generate_content.json"),
        "passages": {
            "0": {"passage_id": str(world.passage.passage_id)},
            "1": external("https://en.wikipedia.org/wiki/Ulm"),
            "2": external("gs://corpus/bridge.pdf"),
            "4": external("https://img.example/1.png"),
            # "3" is deliberately not mapped.
        },
        "language": "en",
    }
    out.update(overrides)
    return out


def post(user, data):
    api = APIClient()
    api.force_authenticate(user)
    return api.post(URL, data, format="json")


def test_grounding_supports_become_candidate_links_per_chunk(world):
    response = post(world.curator, body(world))
    assert response.status_code == 201, response.json()
    report = response.json()
    assert report["counts"] == {"created": 3, "replayed": 0, "skipped": 9}
    rows = [(c["support_index"], c.get("chunk_position"), c["outcome"], c.get("reason"),
             c["answer_span"]) for c in report["citations"]]  # fmt: skip
    span = lambda s, e: {"start": s, "end": e}  # noqa: E731
    assert rows == [
        (0, 0, "created", None, span(22, 48)),
        (0, 1, "created", None, span(22, 48)),
        (1, 0, "created", None, span(69, 100)),
        (2, 0, "skipped", "segment_offset_inside_character", None),
        (3, 0, "skipped", "segment_outside_part", None),
        (4, 0, "skipped", "segment_part_not_text", None),
        (5, 0, "skipped", "segment_part_not_text", None),
        (6, 0, "skipped", "segment_part_not_found", None),
        (7, 0, "skipped", "passage_not_mapped", span(0, 5)),
        (7, 1, "skipped", "grounding_chunk_not_found", span(0, 5)),
        (7, 2, "skipped", "unsupported_citation_type", None),
        (8, None, "skipped", "no_grounding_chunks", span(0, 2)),
    ]
    first = report["citations"][0]
    assert first["provider_data"]["confidence_score"] == 0.97
    assert first["source_span"] is None and first["anchor"] == "unattempted"
    assert first["source_span_note"] == "source span not provided by provider"


def test_a_gemini_link_is_the_segment_to_a_locator(world):
    report = post(world.curator, body(world)).json()
    link = GroundingLink.objects.select_related("current_statement", "current_passage").get(
        pk=report["citations"][0]["grounding_id"]
    )
    statement = link.current_statement
    assert statement.statement_ref == "urn:answer:gemini@1#cp=22-48"
    assert statement.answer_selector == {"type": "TextPositionSelector", "start": 22, "end": 48}
    assert statement.claim_scope == {"proposition": "the bridge opened in 1932."}
    assert statement.answer_representation == {"language": "en", "media_type": "text/plain"}
    assert link.current_passage.passage_id == world.passage.passage_id
    assert link.current_passage.source_selector["value"] == "locator=web"
    # A 0.97 confidence makes nothing visible: an unassessed, unanchored candidate.
    assert (link.record_state, link.display_state, link.resolution_state) == (
        "candidate", "unassessed", "unattempted",
    )  # fmt: skip
    assert (link.support_kind, link.use_basis, link.revision) == ("contextual", "unknown", 1)
    pdf = GroundingLink.objects.select_related("current_statement", "current_passage").get(
        pk=report["citations"][2]["grounding_id"]
    )
    assert pdf.current_statement.claim_scope["proposition"] == "Café “Brücke” 🌉 sits beside it."
    assert pdf.current_passage.source_selector["value"] == "locator=retrievedContext"


def test_reposting_the_same_response_creates_nothing(world):
    data = body(world)
    first = post(world.curator, data).json()
    again = post(world.curator, copy.deepcopy(data))
    assert again.status_code == 200
    replay = again.json()
    assert replay["replayed"] is True and replay["links"] == first["links"]
    assert {c["outcome"] for c in replay["citations"]} == {"replayed", "skipped"}
    assert GroundingLink.objects.count() == 3


def test_mapping_another_chunk_later_creates_only_its_link(world):
    data = body(world)
    post(world.curator, data)
    data["passages"]["3"] = external("https://news.example/")
    response = post(world.curator, data)
    assert response.status_code == 201
    assert response.json()["counts"] == {"created": 1, "replayed": 3, "skipped": 8}


def test_a_malformed_response_is_refused_whole(world):
    data = body(world)
    support = data["payload"]["candidates"][0]["groundingMetadata"]["groundingSupports"][1]
    support["segment"]["endIndex"] = 0
    response = post(world.curator, data)
    assert response.status_code == 400
    assert [o["pointer"] for o in response.json()["offenders"]] == [
        "/payload/candidates/0/groundingMetadata/groundingSupports/1/segment/endIndex"
    ]
    assert GroundingLink.objects.count() == 0
    refusal = AuditEvent.objects.get(action="register_from_citations")
    assert (refusal.outcome, refusal.code) == ("refused", "validation_error")


def test_a_reviewer_is_refused_and_nothing_is_written(world):
    response = post(world.reviewer, body(world))
    assert response.status_code == 403 and response.json()["code"] == "role_required"
    assert GroundingLink.objects.count() == 0


def test_an_imported_passage_with_text_is_not_anchored_by_a_locator(world):
    passage = factories.make_passage(
        "Zoë’s 🚀 the bridge opened in 1932.", dimension=world.dimension
    )
    data = body(world)
    data["passages"]["0"] = {"passage_id": str(passage.passage_id)}
    entry = post(world.curator, data).json()["citations"][0]
    assert (entry["anchor"], entry["source_span"]) == ("unattempted", None)
