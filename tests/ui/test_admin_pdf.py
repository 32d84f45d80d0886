"""The admin and PDF evidence: a curator sees a document and its pages (each as the
reader shows that passage); a link on a page says "page N of <title>" and marks the
quote in the page's text; another Dimension's document is not found."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evidence.models import Document
from evidence.services.pdf_import import import_pdf_document
from grounding.models import GroundingLink
from grounding.services.citations.service import register_from_citations
from policies.choices import Role
from tests import factories
from tests.evidence.pdfs import citing_body, page_citation, report_pdf
from tests.ui.test_admin import change_url, staff

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.ui.urls")]

REF = "https://example.org/annual-report.pdf"


@pytest.fixture
def document(world) -> dict:
    return import_pdf_document(
        actor=world.curator,
        file=report_pdf(),
        source_ref=REF,
        title="Annual report",
        dimension=world.dimension,
    ).report


def _document_url(document_id: str) -> str:
    return reverse("admin:evidence_document_change", args=[document_id])


def test_a_curator_sees_the_document_and_its_pages(client, world, document):
    staff(world.curator)
    client.force_login(world.curator)
    listing = client.get(reverse("admin:evidence_document_changelist")).content.decode()
    assert REF in listing
    html = client.get(_document_url(document["document_id"])).content.decode()
    for number, page in enumerate(document["pages"], start=1):
        url = reverse("admin:evidence_passage_change", args=[page["passage_id"]])
        assert f'<a href="{url}">page {number}</a>' in html
    assert "Revenue grew in every region." in html
    assert "through the winter of 1933." in html


def test_another_dimensions_document_is_not_found_in_the_admin(client, world):
    other = factories.make_dimension()
    theirs = import_pdf_document(
        actor=factories.user_with_roles(other, Role.CURATOR),
        file=report_pdf(),
        source_ref=REF,
        dimension=other,
    ).report
    staff(world.curator)
    client.force_login(world.curator)
    listing = client.get(reverse("admin:evidence_document_changelist")).content.decode()
    assert theirs["document_id"] not in listing and REF not in listing
    foreign = client.get(_document_url(theirs["document_id"]))
    unknown = client.get(_document_url("00000000-0000-7000-8000-000000000000"))
    # Django's answer for an id that does not exist, for both.
    assert (foreign.status_code, foreign["Location"]) == (unknown.status_code, unknown["Location"])
    assert Document.objects.count() == 1


def test_a_links_page_says_which_page_of_which_document_and_marks_the_quote(
    client, world, document
):
    report, _ = register_from_citations(
        actor=world.curator,
        request=citing_body(
            world,
            document["document_id"],
            page_citation("The bridge opened in 1932", (2, 3)),
            answer="urn:answer:pdf-admin@1",
        ),
    )
    link = GroundingLink.objects.get(pk=report["links"][0]["grounding_id"])
    staff(world.curator)
    client.force_login(world.curator)
    html = client.get(change_url(link)).content.decode()
    assert '<p class="help" id="pdf-page">page 2 of Annual report</p>' in html
    mark = '<mark class="anchor-match" data-match="1" title="match 1 of 1">'
    assert f"{mark}The bridge opened in 1932</mark> after four years of work." in html
