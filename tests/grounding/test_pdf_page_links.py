"""A link bound to a PDF page is a link like any other (docs/api.md "PDF evidence"):
its Web Annotation names the PDF and the page by an RFC 8118 fragment refined by its
text selectors (the W3C MUSTs still pass); disposal purges the page's text; and two
drifts: `grounding:state` is declared by the schema, and a replayed from-citations
request shows a since-disposed link only as its tombstone."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from evidence.models import Passage
from evidence.services.pdf_import import import_pdf_document
from grounding import services
from grounding.models import GroundingLink
from tests.evidence.pdfs import citing_body, page_citation, report_pdf
from tests.grounding import export_helpers as h

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttle")]

REF = "https://example.org/annual-report.pdf"
RFC8118 = "http://tools.ietf.org/rfc/rfc8118"
DISPOSAL = {"receipt_ref": "urn:storage:receipt:pdf-1", "policy_ref": "urn:policy:ret@1"}


@pytest.fixture
def fresh_throttle():
    from django.core.cache import caches

    for cache in caches.all():
        cache.clear()


@pytest.fixture
def cited(world) -> dict:
    """A from-citations request citing page 2 of the report, and its first answer."""
    document = import_pdf_document(
        actor=world.curator, file=report_pdf(), source_ref=REF, dimension=world.dimension
    ).report
    body = citing_body(
        world, document["document_id"], page_citation("The bridge opened in 1932", (2, 3))
    )
    answer = _post(world.curator, body)
    assert answer.status_code == 201, answer.content
    return {"document": document, "body": body, "answer": answer.json()}


def _post(user, body):
    api = APIClient()
    api.force_authenticate(user)
    return api.post("/api/v1/groundings/from-citations/", body, format="json")


def _link(cited) -> GroundingLink:
    return GroundingLink.objects.get(pk=cited["answer"]["links"][0]["grounding_id"])


def test_the_web_annotation_names_the_pdf_and_the_page_refined_by_the_text(world, cited):
    link = _link(cited)
    h.decide(world)
    document = h.project(world, link, "web-annotation")["document"]
    assert h.w3c_failures(document) == []
    passage = document["body"]  # the passage is the body by default
    assert passage == {
        "type": "SpecificResource",
        "source": REF,
        "selector": {
            "type": "FragmentSelector",
            "value": "page=2",
            "conformsTo": RFC8118,
            "refinedBy": link.current_passage.source_selector,
        },
    }
    assert passage["selector"]["refinedBy"]["type"] == "TextPositionSelector"
    assert passage["selector"]["refinedBy"]["refinedBy"]["exact"] == "The bridge opened in 1932"


def test_with_the_locator_withheld_the_page_is_not_named(world, cited):
    link = _link(cited)
    h.decide(world, fields=[f for f in h.ALL_FIELDS if f != "passage.locator"])
    document = h.project(world, link, "web-annotation")["document"]
    assert h.w3c_failures(document) == []
    assert document["body"]["source"].startswith("urn:grounding:pdf:")
    assert "page=2" not in str(document["body"].get("selector", ""))
    assert REF not in str(document)


def test_the_schema_declares_grounding_state(world, cited):
    client = Client()
    client.force_login(world.curator)
    schema = client.get("/api/schema/?format=json").json()
    annotation = schema["components"]["schemas"]["WebAnnotationProjection"]
    declared = annotation["properties"]["document"]["properties"]
    assert declared["grounding:state"]["type"] == "object"
    link = _link(cited)
    h.decide(world)
    document = h.project(world, link, "web-annotation")["document"]
    assert set(document) - {"@context"} <= set(declared)


def test_a_disposed_pages_text_is_purged(world, cited):
    link = _link(cited)
    page = Passage.objects.get(pk=link.current_passage.passage_id)
    assert page.text.startswith("The bridge opened in 1932")
    services.dispose(
        actor=world.access_steward, grounding_id=link.pk, expected_revision=2, disposal=DISPOSAL
    )
    page.refresh_from_db()
    assert (page.content_id, page.title) == (None, None)
    assert all(row.content_id is None for row in page.history.all())
    # The other pages, bound by no link, keep theirs.
    other = Passage.objects.get(pk=cited["document"]["pages"][0]["passage_id"])
    assert other.text.startswith("Annual report 2025")


def test_a_replay_after_disposal_shows_the_link_only_as_its_tombstone(world):
    # Any passage: the drift was the report's, whatever the evidence.
    body = {
        "dimension": world.dimension.name,
        "profile": world.profile.ref,
        "answer_revision_ref": "urn:answer:drift@1",
        "format": "anthropic-messages",
        "payload": {
            "content": [
                {
                    "type": "text",
                    "text": "It opened in 1932.",
                    "citations": [
                        {
                            "type": "char_location",
                            "cited_text": "opened in 1932",
                            "document_index": 0,
                            "start_char_index": 11,
                            "end_char_index": 25,
                        }
                    ],
                }
            ]
        },
        "passages": {"0": {"passage_id": str(world.passage.pk)}},
    }
    answer = _post(world.curator, body)
    assert answer.status_code == 201, answer.content
    first = answer.json()["links"][0]
    assert {"statement_ref", "master_ref"} <= set(first)
    link = GroundingLink.objects.get(pk=first["grounding_id"])
    services.dispose(
        actor=world.access_steward,
        grounding_id=link.pk,
        expected_revision=link.revision,
        disposal=DISPOSAL,
    )
    replay = _post(world.curator, body)
    assert replay.status_code == 200, replay.content
    report = replay.json()
    [listed] = report["links"]
    assert set(listed) == {
        "grounding_id", "revision", "record_state", "dimension", "receipt_ref",
        "policy_ref", "observed_at", "disposed_at",
    }  # fmt: skip
    assert (listed["grounding_id"], listed["record_state"]) == (str(link.pk), "disposed")
    [entry] = report["citations"]
    assert (entry["grounding_id"], entry["record_state"]) == (str(link.pk), "disposed")
    assert "master_ref" not in entry
    assert first["master_ref"] not in replay.content.decode()
    assert first["statement_ref"] not in replay.content.decode()
