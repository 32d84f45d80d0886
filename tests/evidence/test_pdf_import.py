"""PDF evidence (docs/api.md "PDF evidence"): POST /api/v1/evidence/documents/ makes one
passage per page; GET …/documents/{id}/ reads it back; a replay is 200; new bytes under
the same source_ref send the links bound to the older pages to review; a page is a
passage for every rule (reads, tenancy, history)."""

from __future__ import annotations

import hashlib

import pytest
from rest_framework.test import APIClient

from evidence.models import Content, Document, Passage, Source
from evidence.services.pdf_import import import_pdf_document
from grounding.models import GroundingLink
from policies.choices import Role
from policies.models import AuditEvent
from tests import factories
from tests.evidence.pdfs import report_pdf, text_pdf

pytestmark = pytest.mark.django_db

DOCUMENTS = "/api/v1/evidence/documents/"
REF = "https://example.org/annual-report.pdf"


def client_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {factories.token_for(user)}")
    return client


def upload(client, data: bytes, *, ref: str = REF, dimension=None, **fields):
    body = {"file": _file(data), "source_ref": ref, **fields}
    query = f"?dimension={dimension.name}" if dimension is not None else ""
    return client.post(DOCUMENTS + query, body, format="multipart")


def _file(data: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("report.pdf", data, content_type="application/pdf")


def test_an_upload_makes_one_passage_per_page_and_a_replay_is_200_with_the_same_ids(world):
    data = report_pdf()
    client = client_for(world.curator)
    first = upload(
        client, data, dimension=world.dimension, title="Annual report",
        retrieved_at="2026-12-01T09:00:00Z",
    )  # fmt: skip
    assert first.status_code == 201, first.content
    body = first.json()
    assert body["dimension"] == world.dimension.name
    assert (body["source_ref"], body["media_type"], body["title"]) == (
        REF,
        "application/pdf",
        "Annual report",
    )
    assert body["sha256"] == hashlib.sha256(data).hexdigest()
    assert (body["byte_size"], body["page_count"]) == (len(data), 3)
    assert body["text_extractor"].startswith("pypdfium2 ")
    assert body["retrieved_at"] == "2026-12-01T09:00:00Z"
    assert body["changes"] == []
    assert [p["page"] for p in body["pages"]] == [1, 2, 3]
    assert {p["text_state"] for p in body["pages"]} == {"text"}

    page = Passage.objects.select_related("content").get(pk=body["pages"][1]["passage_id"])
    assert page.text.startswith("The bridge opened in 1932 after four years of work.")
    assert (page.kind, page.media_type, page.page_number) == ("pdf_page", "application/pdf", 2)
    assert page.locator == f"{REF}#page=2"
    assert page.canonical_url == REF
    assert page.content_sha256 == body["pages"][1]["content_sha256"]
    assert body["pages"][1]["length"] == len(page.text)
    # Its history row is written with it (a passage like any other).
    assert page.history.count() == 1

    replay = upload(client, data, dimension=world.dimension, title="Annual report")
    assert replay.status_code == 200
    assert replay.json() == body
    assert Document.objects.count() == 1
    assert Passage.objects.filter(kind="pdf_page").count() == 3

    read = client.get(f"{DOCUMENTS}{body['document_id']}/")
    assert read.status_code == 200
    assert read.json() == {**body, "withheld": []}
    event = AuditEvent.objects.get(action="pdf_import", outcome="applied")
    assert event.references["document_id"] == body["document_id"]


def test_a_page_reads_as_a_passage_with_its_document_and_number(world):
    report = import_pdf_document(
        actor=world.curator, file=report_pdf(), source_ref=REF, dimension=world.dimension
    ).report
    passage_id = report["pages"][0]["passage_id"]
    body = client_for(world.curator).get(f"/api/v1/evidence/passages/{passage_id}/").json()
    assert (body["document_id"], body["page"], body["kind"]) == (
        report["document_id"],
        1,
        "pdf_page",
    )
    assert body["text"] == "Annual report 2025. Revenue grew in every region. See the appendix."
    assert body["locator"] == f"{REF}#page=1"


def test_a_page_with_no_text_layer_is_empty(world):
    report = import_pdf_document(
        actor=world.curator,
        file=text_pdf(["", "words"]),
        source_ref=REF,
        dimension=world.dimension,
    ).report
    assert [(p["text_state"], p["length"]) for p in report["pages"]] == [
        ("empty", 0),
        ("text", 5),
    ]
    assert Passage.objects.get(pk=report["pages"][0]["passage_id"]).text == ""


def test_other_bytes_under_the_same_ref_are_a_new_document_and_send_bound_links_to_review(
    world,
):
    first = import_pdf_document(
        actor=world.curator, file=report_pdf(), source_ref=REF, dimension=world.dimension
    ).report
    page = Passage.objects.get(pk=first["pages"][1]["passage_id"])
    link = factories.register_link(world.curator, world.dimension, world.profile, page)
    binding = link.current_passage.source_revision_binding
    assert binding == {
        "source_ref": REF,
        "revision": f"sha256:{first['sha256']}",
        "media_type": "application/pdf",
    }

    second = import_pdf_document(
        actor=world.curator,
        file=text_pdf(["Annual report 2026.", "The bridge opened in 1932."]),
        source_ref=REF,
        dimension=world.dimension,
    ).report
    assert second["document_id"] != first["document_id"]
    [change] = second["changes"]
    assert (change["canonical_url"], change["affected"]) == (REF, 1)
    assert change["change_ref"].startswith("urn:grounding:wsp-source-change:")
    link = GroundingLink.objects.get(pk=link.pk)
    assert (link.revision, link.recheck_state) == (2, "pending_review")
    # One Source row for the ref in the Dimension; the two documents' pages share it.
    assert Source.objects.filter(dimension=world.dimension, canonical_url=REF).count() == 1


def test_the_same_bytes_in_another_dimension_are_that_dimensions_own_document(world):
    other = factories.make_dimension()
    other_curator = factories.user_with_roles(other, Role.CURATOR)
    mine = import_pdf_document(
        actor=world.curator, file=report_pdf(), source_ref=REF, dimension=world.dimension
    )
    theirs = import_pdf_document(
        actor=other_curator, file=report_pdf(), source_ref=REF, dimension=other
    )
    assert theirs.created and mine.report["document_id"] != theirs.report["document_id"]
    # Content is stored once per digest (an internal detail): three pages, three texts.
    assert Content.objects.filter(
        sha256__in=[p["content_sha256"] for p in mine.report["pages"]]
    ).count() == 3  # fmt: skip


def test_another_dimensions_document_is_404_exactly_like_an_unknown_id(world):
    other = factories.make_dimension()
    other_curator = factories.user_with_roles(other, Role.CURATOR)
    theirs = import_pdf_document(
        actor=other_curator, file=report_pdf(), source_ref=REF, dimension=other
    ).report
    client = client_for(world.curator)
    foreign = client.get(f"{DOCUMENTS}{theirs['document_id']}/")
    unknown = client.get(f"{DOCUMENTS}00000000-0000-7000-8000-000000000000/")
    assert foreign.status_code == unknown.status_code == 404
    assert foreign.json() == unknown.json()
    # And its pages, as passages.
    page = theirs["pages"][0]["passage_id"]
    assert client.get(f"/api/v1/evidence/passages/{page}/").status_code == 404


def test_a_reviewer_of_the_dimension_reads_no_document(world):
    report = import_pdf_document(
        actor=world.curator, file=report_pdf(), source_ref=REF, dimension=world.dimension
    ).report
    response = client_for(world.reviewer).get(f"{DOCUMENTS}{report['document_id']}/")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_an_upload_without_the_curator_role_is_403_and_audited(world):
    response = upload(client_for(world.reviewer), report_pdf(), dimension=world.dimension)
    assert response.status_code == 403
    assert response.json()["code"] == "role_required"
    assert Document.objects.count() == 0
    assert AuditEvent.objects.filter(action="pdf_import", outcome="refused").count() == 1


def test_a_form_without_file_or_source_ref_is_400_with_offenders(world):
    client = client_for(world.curator)
    response = client.post(
        f"{DOCUMENTS}?dimension={world.dimension.name}", {"title": "x"}, format="multipart"
    )
    assert response.status_code == 400
    assert sorted(o["pointer"] for o in response.json()["offenders"]) == ["/file", "/source_ref"]
    assert Document.objects.count() == 0


def test_a_keyed_retry_of_an_upload_replays_its_first_answer(world):
    client = client_for(world.curator)
    client.credentials(
        HTTP_AUTHORIZATION=f"Token {factories.token_for(world.curator)}",
        HTTP_IDEMPOTENCY_KEY="upload-1",
    )
    first = upload(client, report_pdf(), dimension=world.dimension)
    again = upload(client, report_pdf(), dimension=world.dimension)
    assert (first.status_code, again.status_code) == (201, 201)
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    other = upload(client, text_pdf(["other"]), dimension=world.dimension)
    assert (other.status_code, other.json()["code"]) == (422, "idempotency_key_reuse")
    assert Document.objects.count() == 1
