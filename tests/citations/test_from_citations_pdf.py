"""from-citations with a PDF document (docs/api.md "PDF evidence", citations): Anthropic
`page_location` binds the page its cited_text is found on, compared in NFC with each
run of white space as one space (recorded as the anchor's transformation_ref): once ⇒
resolved, several ⇒ ambiguous, none ⇒ unresolved on the first cited page, across a
page break ⇒ the starting page and never resolved, outside the document ⇒ skipped."""

from __future__ import annotations

import copy

import pytest
from rest_framework.test import APIClient

from evidence.services.pdf_import import import_pdf_document
from grounding.citations.pages import PAGE_RESOLVER_REF, WHITESPACE_TRANSFORMATION
from grounding.models import GroundingLink
from policies.choices import Role
from tests import factories
from tests.evidence.pdfs import citing_body, page_citation, text_pdf

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttle")]

URL = "/api/v1/groundings/from-citations/"
REF = "https://example.org/annual-report.pdf"
PAGES = [
    "Annual report 2025. Revenue grew in every region. See the appendix.",
    # fpdf2 breaks the line where the text says; PDFium reads it back as a line break.
    "The bridge opened in 1932\nafter four years of work. See the appendix.\n"
    "Maintenance of the span continued",
    "through the winter of 1933. See the appendix. Tolls: see the appendix.",
]


@pytest.fixture(scope="module")
def pdf_bytes() -> bytes:
    return text_pdf(PAGES, title="Annual report")


@pytest.fixture
def document(world, pdf_bytes) -> dict:
    return import_pdf_document(
        actor=world.curator, file=pdf_bytes, source_ref=REF, dimension=world.dimension
    ).report


def post(user, data: dict):
    api = APIClient()
    api.force_authenticate(user)
    return api.post(URL, data, format="json")


def entries(world, document, *citations):
    response = post(world.curator, citing_body(world, document["document_id"], *citations))
    assert response.status_code in (200, 201), response.content
    return response.json()["citations"]


def page_id(document: dict, page: int) -> str:
    return document["pages"][page - 1]["passage_id"]


def test_a_quote_found_once_binds_that_page_resolved_with_quote_and_position(world, document):
    [entry] = entries(world, document, page_citation("opened in 1932 after four years", (1, 3)))
    assert (entry["outcome"], entry["anchor"], entry["page"]) == ("created", "resolved", 2)
    link = GroundingLink.objects.get(pk=entry["grounding_id"])
    binding = link.current_passage
    assert str(binding.passage_id) == page_id(document, 2)
    # The page's own characters (its line break), at their NFC code points.
    start = PAGES[1].index("opened")
    assert binding.source_selector == {
        "type": "TextPositionSelector",
        "start": start,
        "end": start + len("opened in 1932\nafter four years"),
        "refinedBy": {
            "type": "TextQuoteSelector",
            "exact": "opened in 1932\nafter four years",
            "prefix": "The bridge ",
            "suffix": " of work. See the appendix.\nMain",
        },
    }
    assert binding.transformation_ref == WHITESPACE_TRANSFORMATION
    result = link.current_anchor_observation.anchor_result
    assert (result["status"], result["resolver_ref"], result["matches"]) == (
        "resolved",
        PAGE_RESOLVER_REF,
        [{"start": start, "end": start + 31}],
    )


def test_a_quote_found_on_several_pages_is_ambiguous_and_picks_none(world, document):
    [entry] = entries(world, document, page_citation("See the appendix.", (1, 3)))
    assert (entry["anchor"], entry["anchor_reason"], entry["page"]) == (
        "ambiguous",
        "found_more_than_once",
        1,
    )
    link = GroundingLink.objects.get(pk=entry["grounding_id"])
    assert link.current_passage.source_selector == {
        "type": "TextQuoteSelector",
        "exact": "See the appendix.",
    }
    result = link.current_anchor_observation.anchor_result
    assert (result["status"], result["reason"]) == ("unresolved", "found_on_several_pages")


def test_a_quote_found_twice_on_one_page_is_ambiguous_there(world, document):
    [entry] = entries(world, document, page_citation("the appendix.", (3, 4)))
    assert (entry["anchor"], entry["page"]) == ("ambiguous", 3)
    result = GroundingLink.objects.get(pk=entry["grounding_id"]).current_anchor_observation
    assert (result.anchor_result["status"], result.anchor_result["match_count"]) == (
        "ambiguous",
        2,
    )


def test_a_quote_not_found_binds_the_first_cited_page_unresolved(world, document):
    [entry] = entries(world, document, page_citation("The tunnel opened in 1931", (2, 4)))
    assert (entry["anchor"], entry["anchor_reason"], entry["page"]) == (
        "unresolved",
        "cited_text_not_found",
        2,
    )
    link = GroundingLink.objects.get(pk=entry["grounding_id"])
    assert str(link.current_passage.passage_id) == page_id(document, 2)
    assert link.current_anchor_observation.anchor_result["match_count"] == 0


def test_a_quote_across_a_page_break_binds_its_first_page_and_is_never_resolved(world, document):
    [entry] = entries(world, document, page_citation("span continued through the winter", (2, 4)))
    assert (entry["anchor"], entry["anchor_reason"], entry["page"]) == (
        "unresolved",
        "across_page_break",
        2,
    )
    link = GroundingLink.objects.get(pk=entry["grounding_id"])
    assert str(link.current_passage.passage_id) == page_id(document, 2)
    assert link.current_anchor_observation.anchor_result["status"] == "unresolved"


def test_pages_outside_the_document_are_skipped(world, document):
    [entry] = entries(world, document, page_citation("through the winter", (3, 5)))
    assert (entry["outcome"], entry["reason"]) == ("skipped", "page_outside_document")
    assert GroundingLink.objects.count() == 0


def test_a_quote_with_no_page_is_searched_in_every_page(world, document):
    [entry] = entries(world, document, page_citation("winter of 1933", kind="char_location"))
    assert (entry["anchor"], entry["page"]) == ("resolved", 3)


def test_a_citation_with_neither_page_nor_quote_is_skipped_no_position(world, document):
    [entry] = entries(world, document, page_citation(None, kind="char_location"))
    assert (entry["outcome"], entry["reason"]) == ("skipped", "no_position")


def test_a_replay_creates_nothing(world, document):
    data = citing_body(world, document["document_id"], page_citation("opened in 1932", (2, 3)))
    assert post(world.curator, data).status_code == 201
    again = post(world.curator, copy.deepcopy(data))
    assert again.status_code == 200
    assert again.json()["counts"] == {"created": 0, "replayed": 1, "skipped": 0}


def test_another_dimensions_document_answers_as_an_unknown_id(world, pdf_bytes):
    other = factories.make_dimension()
    theirs = import_pdf_document(
        actor=factories.user_with_roles(other, Role.CURATOR),
        file=pdf_bytes,
        source_ref=REF,
        dimension=other,
    ).report
    quote = page_citation("opened in 1932", (2, 3))
    foreign = post(world.curator, citing_body(world, theirs["document_id"], quote))
    unknown = post(world.curator, citing_body(world, "00000000-0000-7000-8000-000000000000", quote))
    assert foreign.status_code == unknown.status_code == 400
    assert foreign.json() == unknown.json()
    assert foreign.json()["offenders"] == [
        {
            "pointer": "/passages/0/document_id",
            "code": "unknown_reference",
            "detail": "no document has this id.",
        }
    ]
    assert GroundingLink.objects.count() == 0
