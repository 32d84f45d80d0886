"""Bytes that are no readable PDF (docs/api.md "PDF evidence"): each is refused with
problem+json and its reason, nothing is stored, and the refusal is audited. The
extraction runs in a child held to a time and a memory limit, so a crafted file (a
page tree that loops, a stream inflating to gigabytes) ends as `extraction_failed`
within the limit instead of hanging or killing the server."""

from __future__ import annotations

import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from evidence.models import Content, Document, Passage, Source
from evidence.services.pdf_import import import_pdf_document
from policies.models import AuditEvent
from tests import factories
from tests.evidence import pdfs

pytestmark = pytest.mark.django_db

DOCUMENTS = "/api/v1/evidence/documents/"
REF = "https://example.org/hostile.pdf"


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.GROUNDING_PDF_EXTRACT_SECONDS = 10
    settings.GROUNDING_PDF_EXTRACT_MEMORY_BYTES = 256 * 1024 * 1024


def stored() -> tuple[int, int, int, int]:
    return (
        Document.objects.count(),
        Passage.objects.filter(kind="pdf_page").count(),
        Source.objects.filter(canonical_url=REF).count(),
        Content.objects.count(),
    )


def post(world, data: bytes):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {factories.token_for(world.curator)}")
    return client.post(
        f"{DOCUMENTS}?dimension={world.dimension.name}",
        {"file": SimpleUploadedFile("x.pdf", data), "source_ref": REF},
        format="multipart",
    )


def refused(
    world, data: bytes, reason: str, status: int = 422, code: str = "invalid_pdf", read=True
):
    before = stored()
    response = post(world, data)
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["code"] == code
    assert [(o["pointer"], o["code"]) for o in problem["offenders"]] == [("/file", reason)]
    assert stored() == before
    event = AuditEvent.objects.filter(action="pdf_import", outcome="refused").latest("pk")
    assert (event.code, event.dimension_ref) == (code, world.dimension.name)
    # A body refused unread names no document.
    assert event.references.get("source_ref") == (REF if read else None)
    return problem


def test_bytes_that_are_no_pdf_are_not_pdf(world):
    problem = refused(world, b"<html><body>a report</body></html>\n", "not_pdf")
    assert problem["reason"] == "not_pdf"


def test_an_empty_file_is_not_pdf(world):
    refused(world, b"", "not_pdf")


def test_a_truncated_pdf_is_corrupt(world):
    data = pdfs.report_pdf()
    refused(world, data[: len(data) // 2], "corrupt")


def test_a_pdf_whose_body_is_garbage_is_corrupt(world):
    refused(world, b"%PDF-1.7\n" + bytes(range(256)) * 40 + b"\n%%EOF\n", "corrupt")


def test_a_password_protected_pdf_is_encrypted(world):
    refused(world, pdfs.text_pdf(["secret figures"], password="pw"), "encrypted")


def test_more_pages_than_allowed_is_too_many_pages(world, settings):
    settings.GROUNDING_PDF_MAX_PAGES = 3
    refused(world, pdfs.many_pages_pdf(4), "too_many_pages")


def test_a_file_over_the_byte_limit_is_413_too_large(world, settings):
    settings.GROUNDING_PDF_MAX_BYTES = 1000
    refused(world, pdfs.report_pdf(), "too_large", status=413, code="too_large")


def test_a_body_far_over_the_limit_is_refused_before_it_is_read(world, settings):
    settings.GROUNDING_PDF_MAX_BYTES = 10
    data = b"%PDF-" + b"0" * 200_000
    refused(world, data, "too_large", status=413, code="too_large", read=False)


def test_a_page_tree_that_loops_fails_extraction_within_the_limit(world):
    started = time.monotonic()
    refused(world, pdfs.page_tree_loop_pdf(), "extraction_failed")
    assert time.monotonic() - started < 10


def test_a_stream_inflating_to_gigabytes_fails_extraction_within_the_limit(world):
    data = pdfs.bomb_pdf(2048)
    assert len(data) < 3_000_000
    started = time.monotonic()
    refused(world, data, "extraction_failed")
    assert time.monotonic() - started < 10


def test_an_extraction_over_the_time_limit_is_killed_and_fails(world, settings):
    # A limit no extraction meets: the child is killed at the deadline.
    settings.GROUNDING_PDF_EXTRACT_SECONDS = 0
    refused(world, pdfs.report_pdf(), "extraction_failed")


def test_a_font_with_no_unicode_mapping_gives_an_empty_page_never_a_guess(world):
    report = import_pdf_document(
        actor=world.curator, file=pdfs.unmapped_font_pdf(), source_ref=REF,
        dimension=world.dimension,
    ).report  # fmt: skip
    [page] = report["pages"]
    assert (page["text_state"], page["length"]) == ("empty", 0)
    # PDFium alone would have read the character codes as "ABCABC".
    assert Passage.objects.get(pk=page["passage_id"]).text == ""
