"""Writes of the evidence app: a PDF imported into one Dimension, one passage per page
(docs/api.md "PDF evidence").

A page is a passage like a WSP passage: its text (the page's text layer, NFC) stored
once per digest in Content, its Source the Dimension's row for the document's
`source_ref`, its history written with it, its disclosure, disposal, tenancy, log and
feed those of every passage. What a page adds is its document (`Passage.document`,
`page_number`) and its locator `source_ref#page=N` (RFC 8118).

The same bytes under the same `source_ref` in the Dimension replay the stored report
(200). Other bytes under a `source_ref` the Dimension holds are a new document: the
links bound to the older document's pages get a `source` change notification, in
this transaction, through the same hook a WSP import calls (evidence.import_hooks).

Bytes that are not a readable PDF are refused (`invalid_pdf`, with the reason, or
`too_large`) before anything is written; the entry audits the refusal. The text is
extracted in a child process held to a time and a memory limit (evidence.pdf).
"""

from __future__ import annotations

import copy
import hashlib
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import IntegrityError, transaction

from common.kernel.bulk import insert_rows, insert_with_history
from common.kernel.canonical import text_sha256
from common.kernel.instants import rfc3339
from common.kernel.refusals import Offender, Refusal
from common.kernel.rows import new_instance
from common.kernel.text import plausible_ref
from evidence import import_hooks, pdf
from evidence.choices import AccessLabel, ObservationKind, SourceField, TextState
from evidence.models import Content, Document, Passage, Source
from evidence.services.wsp_write import ImportResult
from policies import audit
from policies.actions import composable
from policies.choices import Role
from policies.models import Dimension
from policies.operations import Operation, Param
from policies.services import dimension_named_or_only, require_active, require_role

ACTION = "pdf_import"
MEDIA_TYPE = "application/pdf"
PASSAGE_REF = "urn:grounding:pdf:{document_id}#page={page}"
_CHUNK = 1 << 20


def page_locator(source_ref: str, page: int) -> str:
    """A page's locator: the document's ref with an RFC 8118 page fragment."""
    return f"{source_ref}#page={page}"


def refusal_context(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The refused event's fields: the Dimension imported into (resolved when the
    caller may import there, else a plausible name) and the document's ref."""
    actor, named = kwargs.get("actor"), kwargs.get("dimension")
    try:
        dimension: Any = _import_dimension(actor, named)
    except Refusal:
        dimension = named if plausible_ref(named, 63) else None
    source_ref = kwargs.get("source_ref")
    return {
        "actor": actor,
        "dimension": dimension,
        "references": {"source_ref": source_ref if plausible_ref(source_ref, 2048) else None},
    }


@composable
def do_import_pdf_document(
    *,
    actor,
    file: Any,
    source_ref: str,
    title: str | None = None,
    retrieved_at: datetime | None = None,
    dimension: Any = None,
) -> ImportResult:
    """Import one PDF (`file`: bytes, or an uploaded file) into a Dimension; replay the
    same bytes under the same `source_ref`; refuse anything that is no readable PDF.

    Refusals (`not_found`, `dimension_required`, `dimension_inactive`,
    `role_required`, `too_large`, `invalid_pdf`) store nothing; the entry audits them.
    """
    dimension = _import_dimension(actor, dimension)
    size = len(file) if isinstance(file, bytes | bytearray) else file.size
    limit = settings.GROUNDING_PDF_MAX_BYTES
    if size > limit:
        detail = f"the file is larger than {limit} bytes."
        raise Refusal("too_large", detail, offenders=[Offender("/file", "too_large", detail)])
    sha256, head, tail, source = _read(file)
    stored = Document.objects.filter(
        dimension=dimension, source_ref=source_ref, sha256=sha256
    ).first()
    if stored is not None:
        return ImportResult(report=copy.deepcopy(stored.report), created=False)
    try:
        pdf.check_edges(head, tail)
        extraction = pdf.extract(source)
    except pdf.PdfRejected as rejected:
        raise Refusal(
            "invalid_pdf",
            f"the file is not a readable PDF ({rejected.reason}); nothing stored.",
            offenders=[Offender("/file", rejected.reason, rejected.detail)],
            extra={"reason": rejected.reason},
        ) from None
    try:
        # A savepoint: a concurrent import of the same bytes wins the unique revision.
        with transaction.atomic():
            return _write(
                actor=actor,
                dimension=dimension,
                extraction=extraction,
                document=dict(
                    source_ref=source_ref,
                    sha256=sha256,
                    byte_size=size,
                    title=title,
                    retrieved_at=retrieved_at,
                ),
            )
    except IntegrityError:
        stored = Document.objects.filter(
            dimension=dimension, source_ref=source_ref, sha256=sha256
        ).first()
        if stored is None:
            raise
        return ImportResult(report=copy.deepcopy(stored.report), created=False)


PDF_IMPORT = Operation(
    ACTION,
    body=do_import_pdf_document,
    input="evidence.api.serializers.PdfUploadSerializer",
    output="evidence.api.serializers.PdfDocumentSerializer",
    roles=(Role.CURATOR,),
    refusals=(
        "validation_error",
        "not_found",
        "dimension_required",
        "dimension_inactive",
        "role_required",
        "too_large",
        "invalid_pdf",
        "change_conflict",
    ),
    success=(200, 201),
    query=(
        Param(
            "dimension",
            description="The Dimension to import into; may be left out by a curator "
            "of exactly one Dimension.",
        ),
    ),
    summary="Import a PDF into a Dimension: one passage per page (curator)",
    description="multipart/form-data: file (the PDF), source_ref, optional title and "
    "retrieved_at. 201 on first import, 200 on a replay (the same bytes and source_ref).",
    context=refusal_context,
    # The file is bytes, not text; the strings are bounded by the input serializer.
    screen=None,
)
import_pdf_document = PDF_IMPORT.entry


def _import_dimension(actor, name: Any) -> Dimension:
    dimension = (
        name if isinstance(name, Dimension) else dimension_named_or_only(actor, name, Role.CURATOR)
    )
    require_active(dimension)
    require_role(actor, dimension, *PDF_IMPORT.roles)
    return dimension


def _read(file: Any) -> tuple[str, bytes, bytes, str | bytes]:
    """The bytes' digest, first and last KiB, and what the extractor reads: the upload's
    file on disk when it has one (the server never holds a large PDF), else the bytes."""
    if isinstance(file, bytes | bytearray):
        data = bytes(file)
        return hashlib.sha256(data).hexdigest(), data[: pdf.EDGE], data[-pdf.EDGE :], data
    digest = hashlib.sha256()
    head, tail = b"", b""
    file.seek(0)
    for chunk in file.chunks(_CHUNK):
        digest.update(chunk)
        if len(head) < pdf.EDGE:
            head += chunk[: pdf.EDGE - len(head)]
        tail = (tail + chunk)[-pdf.EDGE :]
    path = getattr(file, "temporary_file_path", None)
    if path is not None:
        return digest.hexdigest(), head, tail, path()
    file.seek(0)
    return digest.hexdigest(), head, tail, file.read()


def _write(
    *, actor, dimension: Dimension, extraction: pdf.Extraction, document: dict[str, Any]
) -> ImportResult:
    user = actor if getattr(actor, "pk", None) else None
    source_ref = document["source_ref"]
    row = new_instance(
        Document,
        dict(
            dimension=dimension,
            source_ref=source_ref,
            sha256=document["sha256"],
            byte_size=document["byte_size"],
            page_count=len(extraction.texts),
            media_type=MEDIA_TYPE,
            text_extractor=extraction.extractor,
            retrieved_at=document["retrieved_at"],
            imported_by=user,
        ),
    )
    source = Source.objects.filter(dimension=dimension, canonical_url=source_ref).first()
    new_sources = []
    if source is None:
        source = new_instance(
            Source,
            {
                "dimension_id": dimension.pk,
                "canonical_url": source_ref,
                "host": (urlsplit(source_ref).hostname or "")[:255],
            },
        )
        new_sources.append(source)
    hashes = [text_sha256(text) for text in extraction.texts]
    stored = set(Content.objects.filter(sha256__in=set(hashes)).values_list("sha256", flat=True))
    contents: dict[str, Content] = {}
    pages: list[Passage] = []
    for number, (text, sha) in enumerate(zip(extraction.texts, hashes, strict=True), start=1):
        if sha not in stored and sha not in contents:
            contents[sha] = new_instance(
                Content, {"sha256": sha, "text": text, "length": len(text)}
            )
        pages.append(_page(row, source, number, sha, document["title"]))
    row.report = _report(row, dimension, pages, extraction.texts, document)
    # The links bound to an older document's pages learn of the new revision here.
    changes = import_hooks.run(actor, dimension, [(0, page) for page in pages]).get(0, [])
    row.report["changes"] = changes
    insert_rows(Document, [row])
    if contents:
        Content.objects.bulk_create(
            sorted(contents.values(), key=lambda c: c.sha256), ignore_conflicts=True
        )
    insert_with_history(Source, new_sources, user=actor, change_reason=ACTION)
    insert_with_history(Passage, pages, user=actor, change_reason=ACTION)
    audit.record(
        actor=actor,
        action=ACTION,
        dimension=dimension,
        references={
            # The feed's `passage.imported` events name the import (feed.outbox).
            "import_id": str(row.document_id),
            "document_id": str(row.document_id),
            "source_ref": source_ref,
            "sha256": row.sha256,
            "page_count": row.page_count,
        },
    )
    return ImportResult(report=copy.deepcopy(row.report), created=True)


def _page(document: Document, source: Source, number: int, sha: str, title: str | None):
    return new_instance(
        Passage,
        dict(
            dimension_id=document.dimension_id,
            passage_ref=PASSAGE_REF.format(document_id=document.document_id, page=number),
            source=source,
            content_id=sha,
            content_sha256=sha,
            kind=ObservationKind.PDF_PAGE,
            source_field=SourceField.TEXT,
            locator=page_locator(document.source_ref, number),
            observed_url=document.source_ref,
            canonical_url=document.source_ref,
            title=title,
            media_type=MEDIA_TYPE,
            # A restricted source (as this Dimension labels it) restricts its pages.
            access_label=source.access_label or AccessLabel.PUBLIC,
            document=document,
            page_number=number,
        ),
    )


def _report(
    row: Document, dimension: Dimension, pages: list[Passage], texts: list[str], given: dict
) -> dict[str, Any]:
    return {
        "document_id": str(row.document_id),
        "dimension": dimension.name,
        "source_ref": row.source_ref,
        "title": given["title"],
        "media_type": MEDIA_TYPE,
        "sha256": row.sha256,
        "byte_size": row.byte_size,
        "page_count": row.page_count,
        "text_extractor": row.text_extractor,
        "retrieved_at": rfc3339(given["retrieved_at"]) if given["retrieved_at"] else None,
        "pages": [
            {
                "page": page.page_number,
                "passage_id": str(page.passage_id),
                "content_sha256": page.content_sha256,
                "length": len(text),
                "text_state": TextState.TEXT if text else TextState.EMPTY,
            }
            for page, text in zip(pages, texts, strict=True)
        ],
        "changes": [],
    }
