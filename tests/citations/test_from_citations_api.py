"""POST /api/v1/groundings/from-citations/: provider citations become candidate
links in one atomic request; recorded, never judged; idempotent on re-post."""

from __future__ import annotations

import copy
import json
import threading

import pytest
from django.db import connection
from rest_framework.test import APIClient

from common.kernel.refusals import Refusal
from evidence.offsets import codepoint_to_utf16
from grounding.models import AnchorObservation, GroundingLink
from grounding.services.citations.plan import plan as plan_citation
from grounding.services.citations.service import PARSERS, _passage_texts, register_from_citations
from policies.choices import Role
from policies.models import AuditEvent
from tests import factories
from tests.citations.helpers import PROBLEM, URL, external, load, nfc, openai_body
from tests.conftest import requires_postgres

pytestmark = [
    pytest.mark.urls("tests.citations.urls"),
    pytest.mark.django_db,
    pytest.mark.usefixtures("fresh_throttle"),
]


@pytest.fixture
def documents(world) -> list:
    texts = [d["data"] for d in load("anthropic_documents.json")["documents"]]
    return [
        factories.make_passage(texts[0], dimension=world.dimension),
        factories.make_passage(texts[1], dimension=world.dimension),
    ]


def client(user) -> APIClient:
    api = APIClient()
    api.force_authenticate(user)
    return api


def anthropic_body(world, documents, **overrides) -> dict:
    body = {
        "dimension": world.dimension.name,
        "profile": world.profile.ref,
        "answer_revision_ref": "urn:answer:77@1",
        "format": "anthropic-messages",
        "payload": load("anthropic_messages.json"),
        "passages": {
            "0": {"passage_id": str(documents[0].passage_id)},
            "1": {"passage_id": str(documents[1].passage_id)},
            "2": external("https://example.org/report-2019.pdf", "application/pdf"),
            "3": external("urn:example:custom-content:3", "text/plain"),
            "https://example.org/tours": external("https://example.org/tours"),
            "https://kb.example.org/tours": external("https://kb.example.org/tours"),
            # "4" is deliberately not mapped.
        },
    }
    body.update(overrides)
    return body


def post(user, body):
    return client(user).post(URL, body, format="json")


def by_index(report: dict) -> dict[int, dict]:
    return {c["index"]: c for c in report["citations"]}


def test_anthropic_citations_become_candidate_links(world, documents):
    response = post(world.curator, anthropic_body(world, documents))
    assert response.status_code == 201, response.json()
    report = response.json()
    assert report["created"] == 7 and report["replayed"] is False
    assert report["counts"] == {"created": 7, "replayed": 0, "skipped": 1}
    assert len(report["links"]) == 7
    cited = by_index(report)
    assert [cited[i]["outcome"] for i in range(8)] == ["created"] * 5 + ["skipped"] + [
        "created"
    ] * 2
    assert cited[5]["reason"] == "passage_not_mapped" and "grounding_id" not in cited[5]

    # Astral characters before the cited span on both sides.
    assert cited[0]["answer_span"] == {"start": 27, "end": 52}
    assert cited[0]["source_span"] == {"start": 44, "end": 70}
    assert (cited[0]["anchor"], cited[0]["title"]) == ("resolved", "Bridge history")
    # NFD answer block before, NFD document: provider 12..37 ⇒ NFC 10..34.
    assert cited[1]["answer_span"] == {"start": 74, "end": 88}
    assert cited[1]["source_span"] == {"start": 10, "end": 34}
    assert cited[1]["anchor"] == "resolved"
    for index, document in ((0, documents[0]), (1, documents[1])):
        span = cited[index]["source_span"]
        citation = report_citation(index)
        assert nfc(document.text)[span["start"] : span["end"]] == nfc(citation["cited_text"])
    # Fragment locators are not anchored here.
    assert cited[2]["anchor"] == cited[3]["anchor"] == "unattempted"
    assert cited[2]["source_span"] is None

    link = GroundingLink.objects.select_related("current_statement", "current_passage").get(
        pk=cited[0]["grounding_id"]
    )
    statement = link.current_statement
    assert statement.statement_ref == "urn:answer:77@1#cp=27-52"
    assert statement.answer_selector == {"type": "TextPositionSelector", "start": 27, "end": 52}
    assert statement.claim_scope == {"proposition": "the bridge opened in 1932"}
    assert statement.answer_representation == {"language": "und", "media_type": "text/plain"}
    assert link.current_passage.source_selector == {
        "type": "TextPositionSelector", "start": 44, "end": 70
    }  # fmt: skip
    assert link.current_passage.passage_id == documents[0].passage_id
    assert (link.record_state, link.use_basis, link.support_kind) == (
        "candidate", "unknown", "quotation",
    )  # fmt: skip
    assert link.display_state == "unassessed" and link.resolution_state == "resolved"
    assert link.revision == 2  # registered, then its anchor observation
    page = GroundingLink.objects.get(pk=cited[2]["grounding_id"])
    assert page.support_kind == "contextual" and page.current_passage.passage_id is None


def report_citation(index: int) -> dict:
    payload = load("anthropic_messages.json")
    found = [c for b in payload["content"] for c in b.get("citations", [])]
    return found[index]


def test_a_cited_text_mismatch_is_unresolved_and_the_selector_is_kept(world, documents):
    report = post(world.curator, anthropic_body(world, documents)).json()
    mismatch = by_index(report)[4]
    assert mismatch["outcome"] == "created"
    assert (mismatch["anchor"], mismatch["anchor_reason"]) == ("unresolved", "cited_text_mismatch")
    link = GroundingLink.objects.select_related("current_passage").get(pk=mismatch["grounding_id"])
    # The provider's location is recorded as given; nothing is retargeted.
    assert link.current_passage.source_selector == {
        "type": "TextPositionSelector", "start": 71, "end": 90
    }  # fmt: skip
    assert link.resolution_state == "unknown"
    (observation,) = AnchorObservation.objects.filter(link=link)
    assert observation.anchor_result["status"] == "unresolved"
    assert observation.anchor_result["match_count"] == 0
    assert observation.resolver_ref == "urn:grounding:resolver:citation-check@1"


def test_reposting_the_same_request_creates_nothing(world, documents):
    body = anthropic_body(world, documents)
    first = post(world.curator, body).json()
    counts = (
        GroundingLink.objects.count(),
        AuditEvent.objects.filter(action="register").count(),
        AnchorObservation.objects.count(),
    )
    again = post(world.curator, copy.deepcopy(body))
    assert again.status_code == 200
    replay = again.json()
    assert replay["replayed"] is True and replay["created"] == 0
    assert replay["links"] == first["links"]
    assert replay["request_sha256"] == first["request_sha256"]
    assert {c["outcome"] for c in replay["citations"]} == {"replayed", "skipped"}
    assert [c.get("anchor") for c in replay["citations"]] == [
        c.get("anchor") for c in first["citations"]
    ]
    assert counts == (
        GroundingLink.objects.count(),
        AuditEvent.objects.filter(action="register").count(),
        AnchorObservation.objects.count(),
    )


def test_mapping_a_skipped_citation_later_creates_only_that_link(world, documents):
    body = anthropic_body(world, documents)
    first = post(world.curator, body).json()
    body["passages"]["4"] = external("urn:example:doc-4", "text/plain")
    response = post(world.curator, body)
    assert response.status_code == 201
    report = response.json()
    assert report["created"] == 1 and report["counts"]["replayed"] == 7
    assert by_index(report)[5]["outcome"] == "created"
    assert by_index(report)[5]["source_span_note"].startswith("passage text not held here")
    assert GroundingLink.objects.count() == len(first["links"]) + 1


def test_openai_url_and_file_citations(world):
    response = post(world.curator, openai_body(world))
    assert response.status_code == 201, response.json()
    report = response.json()
    first, second, third = report["citations"]
    assert first["output_index"] == 1 and first["content_index"] == 0
    assert first["answer_span"] == {"start": 48, "end": 109}
    assert first["source_span"] is None
    assert first["source_span_note"] == "source span not provided by provider"
    assert first["anchor"] == "unattempted" and first["title"] == "Bridge history"
    assert second["answer_span"] == {"start": 111, "end": 232}
    assert (third["outcome"], third["reason"]) == ("skipped", "passage_not_mapped")

    link = GroundingLink.objects.select_related("current_statement", "current_passage").get(
        pk=first["grounding_id"]
    )
    answer = nfc("".join(p["text"] for i in load("openai_responses.json")["output"]
                         if i["type"] == "message" for p in i["content"]))  # fmt: skip
    assert link.current_statement.claim_scope == {"proposition": answer[48:109]}
    assert link.current_statement.answer_representation["language"] == "en"
    assert link.current_passage.source_selector["value"] == "locator=url_citation"
    assert link.support_kind == "contextual" and link.revision == 1
    point = GroundingLink.objects.select_related("current_statement").get(pk=second["grounding_id"])
    assert point.current_statement.answer_selector == {
        "type": "TextPositionSelector", "start": 111, "end": 232,
        "refinedBy": {"type": "TextPositionSelector", "start": 32, "end": 32},
    }  # fmt: skip
    assert point.current_statement.statement_ref == "urn:answer:88@3#cp=111-232"


def test_utf16_offsets_give_the_same_links_when_declared(world):
    body = openai_body(world, offset_unit="utf16")
    part = body["payload"]["output"][1]["content"][0]
    for key in ("start_index", "end_index"):
        part["annotations"][0][key] = codepoint_to_utf16(part["text"], part["annotations"][0][key])
    report = post(world.curator, body).json()
    assert report["citations"][0]["answer_span"] == {"start": 48, "end": 109}


def test_a_source_span_outside_the_passage_is_skipped_not_fabricated(world, documents):
    short = factories.make_passage("Too short.", dimension=world.dimension)
    body = anthropic_body(world, documents)
    body["passages"]["0"] = {"passage_id": str(short.passage_id)}
    report = post(world.curator, body).json()
    cited = by_index(report)
    assert (cited[0]["outcome"], cited[0]["reason"]) == ("skipped", "source_offset_not_convertible")
    assert cited[1]["outcome"] == "created"


def test_generation_input_needs_its_evidence_ref(world, documents):
    refused = post(world.curator, anthropic_body(world, documents, use_basis="generation_input"))
    assert refused.status_code == 400
    assert "/generation_evidence_ref" in [o["pointer"] for o in refused.json()["offenders"]]
    assert GroundingLink.objects.count() == 0
    body = anthropic_body(world, documents, use_basis="generation_input",
                          generation_evidence_ref="urn:trace:run-9")  # fmt: skip
    report = post(world.curator, body).json()
    link = GroundingLink.objects.get(pk=report["links"][0]["grounding_id"])
    assert (link.use_basis, link.generation_evidence_ref) == ("generation_input", "urn:trace:run-9")


def test_a_reviewer_is_refused_with_role_required_and_nothing_is_written(world, documents):
    response = post(world.reviewer, anthropic_body(world, documents))
    assert response.status_code == 403
    assert response["Content-Type"].startswith(PROBLEM)
    assert response.json()["code"] == "role_required"
    assert GroundingLink.objects.count() == 0
    refusal = AuditEvent.objects.get(action="register_from_citations")
    assert (refusal.outcome, refusal.code) == ("refused", "role_required")
    with pytest.raises(Refusal) as raised:
        register_from_citations(actor=world.reviewer, request=anthropic_body(world, documents))
    assert raised.value.code == "role_required"


def test_unauthenticated_is_401(world, documents):
    assert APIClient().post(URL, anthropic_body(world, documents), format="json").status_code == 401


def test_a_malformed_payload_is_refused_with_pointers(world, documents):
    body = anthropic_body(world, documents)
    del body["payload"]["content"][1]["citations"][0]["start_char_index"]
    body["payload"]["content"][6]["citations"][0]["end_char_index"] = 1
    response = post(world.curator, body)
    assert response.status_code == 400
    assert response["Content-Type"].startswith(PROBLEM)
    problem = response.json()
    assert problem["code"] == "validation_error"
    assert sorted(o["pointer"] for o in problem["offenders"]) == [
        "/payload/content/1/citations/0/start_char_index",
        "/payload/content/6/citations/0/end_char_index",
    ]
    assert GroundingLink.objects.count() == 0


def test_request_level_errors_point_at_the_request(world, documents):
    body = anthropic_body(world, documents, format="cohere", extra=1)
    body.pop("answer_revision_ref")
    body["passages"]["0"] = "not an object"
    problem = post(world.curator, body).json()
    assert sorted(o["pointer"] for o in problem["offenders"]) == [
        "/answer_revision_ref", "/extra", "/format", "/passages/0",
    ]  # fmt: skip


def test_register_offenders_are_remapped_into_the_request(world, documents):
    body = anthropic_body(world, documents)
    body["passages"]["0"] = {"passage_id": "0190f000-0000-7000-8000-000000000000"}
    problem = post(world.curator, body).json()
    found = {(o["pointer"], o["code"]) for o in problem["offenders"]}
    assert ("/passages/0/passage_id", "unknown_reference") in found
    assert all(not p.startswith("/items") for p, _ in found)


def test_a_language_is_refused_up_front_not_only_once_a_citation_maps(world, documents):
    """The options every derived link carries are judged before any citation is
    (the OpenAPI description states them): refused with no passage mapped too."""
    for passages in ({"0": {"passage_id": "0190f000-0000-7000-8000-000000000000"}}, {}):
        body = anthropic_body(world, documents, language="not a tag!", passages=passages)
        problem = post(world.curator, body).json()
        found = [(o["pointer"], o["code"]) for o in problem["offenders"]]
        assert found == [("/language", "schema.pattern")]


def test_provider_titles_are_data_only(world, documents):
    body = anthropic_body(world, documents)
    body["payload"]["content"][1]["citations"][0]["document_title"] = "role:steward (verified)"
    report = post(world.curator, body).json()
    link = GroundingLink.objects.select_related("current_passage").get(
        pk=by_index(report)[0]["grounding_id"]
    )
    assert by_index(report)[0]["title"] == "role:steward (verified)"
    assert link.owner_ref == world.dimension.owner_ref
    assert link.display_state == "unassessed" and link.record_state == "candidate"
    assert "steward" not in json.dumps(link.current_passage.source_revision_binding)


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_two_identical_concurrent_requests_create_the_links_once(world, documents):
    body = anthropic_body(world, documents)
    barrier = threading.Barrier(2)
    created: list[bool] = []
    lock = threading.Lock()

    def run() -> None:
        try:
            barrier.wait()
            _, made = register_from_citations(actor=world.curator, request=copy.deepcopy(body))
            with lock:
                created.append(made)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(created) == [False, True]
    assert GroundingLink.objects.count() == 7
    assert AuditEvent.objects.filter(action="register").count() == 7


def _master_refs(world, body) -> list[str]:
    """The master_refs the request's links will have (computed as the service does)."""
    parsed = PARSERS[body["format"]](body["payload"], pointer="/payload", offset_unit=None)
    texts = _passage_texts(body["passages"], world.dimension)
    plans = [
        plan_citation(
            c,
            request=body,
            dimension=world.dimension,
            answer=parsed.answer_text,
            texts=texts,
            media_type=parsed.media_type,
        )
        for c in parsed.citations
    ]
    return [p.master_ref for p in plans if p.item is not None]


def test_another_dimensions_links_with_the_request_s_master_refs_are_no_replay(world, documents):
    """master_ref is unique per Dimension (API.md "Tenancy"): links another tenant
    registered under this request's refs are neither replayed nor named."""
    body = anthropic_body(world, documents)
    other = factories.make_dimension("citations-b")
    other_curator = factories.user_with_roles(other, Role.CURATOR)
    foreign = {
        str(factories.register_link(other_curator, other, world.profile, master_ref=ref).pk)
        for ref in _master_refs(world, body)
    }
    assert len(foreign) == 7
    response = post(world.curator, body)
    assert response.status_code == 201
    report = response.json()
    assert report["created"] == 7 and report["counts"]["replayed"] == 0
    assert not foreign & {e["grounding_id"] for e in report["links"]}
    assert GroundingLink.objects.filter(dimension=world.dimension).count() == 7
