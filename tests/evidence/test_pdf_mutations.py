"""Property: a valid PDF with its bytes mutated (flipped, overwritten, cut, spliced) is
imported or refused with `invalid_pdf` and a reason, never a 500, and never holds the
request past the extraction's time limit; a refusal stores nothing."""

from __future__ import annotations

import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from evidence.models import Document, Passage
from tests import factories
from tests.evidence.pdfs import report_pdf

pytestmark = pytest.mark.django_db

LIMIT_SECONDS = 5
REASONS = {"not_pdf", "corrupt", "encrypted", "too_many_pages", "extraction_failed"}
BASE = report_pdf()

_edit = st.one_of(
    st.tuples(st.just("set"), st.integers(0, len(BASE) - 1), st.integers(0, 255)),
    st.tuples(st.just("cut"), st.integers(0, len(BASE) - 1), st.integers(1, 4096)),
    st.tuples(st.just("insert"), st.integers(0, len(BASE)), st.binary(min_size=1, max_size=64)),
)


def mutate(data: bytes, edits: list[tuple]) -> bytes:
    out = bytearray(data)
    for kind, at, value in edits:
        at = min(at, len(out))
        if kind == "set" and at < len(out):
            out[at] = value
        elif kind == "cut":
            del out[at : at + value]
        elif kind == "insert":
            out[at:at] = value
    return bytes(out)


@pytest.fixture
def limits(settings):
    settings.GROUNDING_PDF_EXTRACT_SECONDS = LIMIT_SECONDS
    settings.GROUNDING_PDF_EXTRACT_MEMORY_BYTES = 256 * 1024 * 1024


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(edits=st.lists(_edit, min_size=1, max_size=8))
def test_a_mutated_pdf_is_imported_or_refused_never_a_500(world, limits, edits):
    data = mutate(BASE, edits)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {factories.token_for(world.curator)}")
    before = (Document.objects.count(), Passage.objects.filter(kind="pdf_page").count())
    started = time.monotonic()
    response = client.post(
        f"/api/v1/evidence/documents/?dimension={world.dimension.name}",
        {"file": SimpleUploadedFile("m.pdf", data), "source_ref": "https://example.org/m.pdf"},
        format="multipart",
    )
    # The request as a whole: the extraction's limit and the rest of the request.
    assert time.monotonic() - started < LIMIT_SECONDS + 10
    assert response.status_code in (200, 201, 422), response.content
    if response.status_code == 422:
        problem = response.json()
        assert problem["code"] == "invalid_pdf"
        [offender] = problem["offenders"]
        assert offender["pointer"] == "/file" and offender["code"] in REASONS
        assert (
            Document.objects.count(),
            Passage.objects.filter(kind="pdf_page").count(),
        ) == before
    else:
        body = response.json()
        assert body["page_count"] == len(body["pages"]) >= 1
