"""Admin for PDF documents (read-only): a document and its pages, as the reader shows
them (docs/api.md "PDF evidence", "Admin").

A document is shown to its Dimension's curators and stewards, where the Dimension's
decisions show its pages' locator (its `source_ref` is their address, as a source
row is). Each page is a passage: listed with its number, text state and length, and
its text as `Reader.read` of that passage discloses it ("withheld" otherwise), linked
to the passage's own admin page. Registered by evidence.admin.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from common.web.admin_base import ANY, DimensionListFilter
from evidence.admin import LOCATOR, WITHHELD, EvidenceReadOnlyAdmin, _per_request, _reader
from evidence.models import Document, Passage

FIELDS = (
    "document_id",
    "dimension",
    "source_ref",
    "sha256",
    "byte_size",
    "page_count",
    "media_type",
    "text_extractor",
    "retrieved_at",
    "imported_at",
)


def _pages(request: HttpRequest, document: Document) -> str:
    """The document's pages, each as the reader discloses its passage."""
    reader = _reader(request)
    rows = []
    for page in document.pages.select_related("content", "dimension").order_by("page_number"):
        shown = reader.read_or_none(page)
        if shown is None:
            text = WITHHELD
        else:
            text = shown.get("text", WITHHELD)
            text = "(no text layer)" if text == "" else (text or WITHHELD)
        url = reverse("admin:evidence_passage_change", args=[page.pk])
        rows.append((url, page.page_number, len(page.text or ""), text))
    if not rows:
        return "—"
    body = format_html_join(
        "",
        '<tr><td><a href="{}">page {}</a></td><td>{}</td>'
        '<td><blockquote class="passage-text">{}</blockquote></td></tr>',
        rows,
    )
    return format_html(
        '<table class="pdf-pages"><thead><tr><th>Page</th><th>Length</th><th>Text</th>'
        "</tr></thead><tbody>{}</tbody></table>",
        body,
    )


@admin.register(Document)
class DocumentAdmin(EvidenceReadOnlyAdmin):
    list_display = ("source_ref", "dimension", "page_count", "byte_size", "imported_at")
    list_filter = (("dimension", DimensionListFilter),)
    search_fields = ("=document_id", "source_ref", "=sha256")
    date_hierarchy = "imported_at"
    list_select_related = ("dimension",)
    reveals = {
        "document_id": ANY,
        "source_ref": LOCATOR,
        "sha256": ANY,
        "dimension": ANY,
        "imported_at": ANY,
    }

    def get_queryset(self, request: HttpRequest):
        # A document is its address: shown where the Dimension's decisions show its
        # pages' locators (a restricted source's only where they name restricted ones).
        rows = super().get_queryset(request)
        return _reader(request).scope(rows, kind=Passage, fields=(LOCATOR,))

    def get_fields(self, request: HttpRequest, obj=None) -> list[Any]:
        fields: list[Any] = list(FIELDS)
        if obj is not None:
            fields.append(_per_request(request, "pages", "pages", _pages))
        return fields

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        return self.get_fields(request, obj)
