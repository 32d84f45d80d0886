"""Admin for passage masters (read-only) and the WSP v3 import page.

Sources, passages and content are masters imported from WSP responses into a
Dimension: the admin never edits them, and shows only the user's own Dimensions'
evidence, as the reader (`policies.reader`, `evidence.reader`) discloses it: rows
through `Reader.scope`, fields and history values of a withheld field as withheld,
search fields and filters only on values disclosed for the row (`reveals`,
`common.web.admin_base`).
The import page runs `evidence.services.wsp_import.do_import_wsp_document` once per
document, all in one transaction, each under `refusal_audited` (policies.actions).
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path

from common.kernel.refusals import Refusal
from common.web.admin_base import (
    ANY,
    DimensionListFilter,
    DisclosedAdmin,
    ReadOnlyAdminMixin,
    holds,
    shown,
)
from evidence.models import Content, Passage, RetrievalObservation, Source
from evidence.reader import PASSAGE_FIELDS, PASSAGE_READERS
from evidence.services.wsp_import import ACTION, do_import_wsp_document, refusal_context
from policies.actions import refusal_audited
from policies.choices import DisclosableField, Role
from policies.models import Dimension
from policies.reader import Reader, reader_for

WITHHELD = "withheld"
MAX_UPLOAD_BYTES = 8 * 1024 * 1024
LOCATOR = DisclosableField.PASSAGE_LOCATOR


def _reader(request: HttpRequest) -> Reader:
    return reader_for(request)


def _evidence_staff(request: HttpRequest, dimension_id: int | None = None) -> bool:
    """Staff who curate or steward some Dimension (or the one given): the only direct
    readers of evidence."""
    return holds(request, *PASSAGE_READERS, dimension_id=dimension_id)


def _per_request(request: HttpRequest, name: str, label: str, show) -> Any:
    """A read-only admin field computed through this request's reader. Built once per
    request and name: Django compares field entries by identity, and the admin
    instance is shared by every request, so nothing request-bound may live on it."""
    cells = request.__dict__.setdefault("_evidence_cells", {})
    if name not in cells:

        def cell(obj) -> str:
            return show(request, obj)

        cell.short_description = label  # type: ignore[attr-defined]
        cell.__name__ = name
        cells[name] = cell
    return cells[name]


def _passage_text(request: HttpRequest, obj: Passage) -> str:
    return _reader(request).read(obj).get("text") or "—"


def _passage_withheld(request: HttpRequest, obj: Passage) -> str:
    return f"{WITHHELD}: " + ", ".join(_reader(request).withheld(obj) or [])


def _shown_dimension_wide(request: HttpRequest, dimension_id: int, field: str) -> bool:
    """Whether the Dimension-wide decisions the reader reads evidence under show
    `field` even of a restricted source (what an envelope's report may name)."""
    reader = _reader(request)
    recipients = reader.staff_recipients(dimension_id, PASSAGE_READERS)
    coverage = reader.coverage(dimension_id, None, recipients)
    return coverage.decided and field in coverage.visible(source_restricted=True)


class EvidenceReadOnlyAdmin(ReadOnlyAdminMixin, DisclosedAdmin):
    """Evidence of the user's own Dimensions only, as the reader shows it."""

    known_reveals = frozenset(PASSAGE_FIELDS)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _evidence_staff(request)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        dimension_id = getattr(obj, "dimension_id", None)
        return _evidence_staff(request, dimension_id)

    def readable_passages(self, request: HttpRequest, *fields: str) -> QuerySet[Passage]:
        return _reader(request).scope(Passage.objects.all(), fields=fields)

    def readable(self, request: HttpRequest, *fields: str) -> QuerySet:
        """This admin's rows (each of a Dimension) where `fields` are shown."""
        rows = self.model._default_manager.all()
        return _reader(request).scope(rows, kind=Passage, fields=fields)

    def disclosed_q(self, request: HttpRequest, reveal: str) -> Q:
        if reveal in PASSAGE_FIELDS:
            return Q(pk__in=self.readable(request, reveal).values("pk"))
        return super().disclosed_q(request, reveal)

    def filter_dimensions(self, request: HttpRequest) -> list[Dimension]:
        return list(_reader(request).dimensions(*PASSAGE_READERS))


@admin.register(Source)
class SourceAdmin(EvidenceReadOnlyAdmin):
    list_display = ("canonical_url", "dimension", "host", "access_label", "created_at")
    list_filter = ("access_label", ("dimension", DimensionListFilter))
    search_fields = ("canonical_url", "host")
    date_hierarchy = "created_at"
    list_select_related = ("dimension",)
    reveals = {
        "canonical_url": LOCATOR,
        "host": LOCATOR,
        "access_label": ANY,
        "dimension": ANY,
        "created_at": ANY,
    }

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # A source is its address: shown where the Dimension's decisions show locators
        # (a restricted source's only where they name restricted sources too).
        rows = super().get_queryset(request)
        return _reader(request).scope(rows, kind=Passage, fields=(LOCATOR,))


@admin.register(Passage)
class PassageAdmin(EvidenceReadOnlyAdmin):
    list_display = ("passage_ref", "dimension", "kind", "provider", "access_label", "created_at")
    list_filter = (
        "kind",
        "access_label",
        "provider",
        ("dimension", DimensionListFilter),
    )
    search_fields = ("=passage_id", "passage_ref", "execution_id")
    date_hierarchy = "created_at"
    list_select_related = ("dimension",)
    reveals = dict.fromkeys(
        (
            "passage_id",
            "passage_ref",
            "execution_id",
            "kind",
            "access_label",
            "provider",
            "dimension",
            "created_at",
        ),
        ANY,
    )
    # Stored members each disclosable field covers (the reader's PASSAGE_FIELDS), as
    # model fields: "text" is the content's.
    _protected = {
        DisclosableField.PASSAGE_EXCERPT: ("content", "provider_fields"),
        DisclosableField.PASSAGE_TITLE: ("title",),
        DisclosableField.PASSAGE_LOCATOR: ("locator", "observed_url", "canonical_url", "source"),
    }

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return _reader(request).scope(super().get_queryset(request))

    def _hidden(self, request: HttpRequest, obj: Passage) -> set[str] | None:
        withheld = _reader(request).withheld(obj)
        if withheld is None:
            return None
        return {name for field in withheld for name in self._protected[field]}

    def get_fields(self, request: HttpRequest, obj=None):
        names = [f.name for f in Passage._meta.concrete_fields]
        if obj is None:
            return names
        hidden = self._hidden(request, obj)
        if hidden is None:
            raise PermissionDenied
        shown_names: list[Any] = [n for n in names if n not in hidden]
        withheld = _reader(request).withheld(obj) or []
        if DisclosableField.PASSAGE_EXCERPT not in withheld:
            shown_names.append(_per_request(request, "text", "text (literal)", _passage_text))
        if withheld:
            shown_names.append(_per_request(request, "withheld", "withheld", _passage_withheld))
        return shown_names

    def history_value(self, request: HttpRequest, obj, name: str, value: Any) -> str:
        hidden = self._hidden(request, obj)
        if hidden is None or name in hidden:
            return WITHHELD
        return shown(value)


@admin.register(Content)
class ContentAdmin(EvidenceReadOnlyAdmin):
    # Content is shared by digest: its row's own time is when any Dimension first
    # stored those bytes, which is not this reader's to know; only digest and length.
    list_display = ("sha256", "length")
    search_fields = ("=sha256",)
    reveals = {"sha256": ANY, "length": ANY}

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # A user sees the content of their passages whose text is shown to them only.
        readable = self.readable_passages(request, DisclosableField.PASSAGE_EXCERPT)
        return super().get_queryset(request).filter(sha256__in=readable.values("content_id"))

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return _evidence_staff(request)

    def get_fields(self, request: HttpRequest, obj=None):
        fields: list[Any] = ["sha256", "length"]
        if obj is not None and self.text_of(request, obj) is not None:
            fields.append(
                _per_request(
                    request, "text", "text (literal)", lambda r, o: self.text_of(r, o) or "—"
                )
            )
        return fields

    def text_of(self, request: HttpRequest, obj: Content) -> str | None:
        """The text as one of the user's passages holding it discloses it, if any does."""
        reader = _reader(request)
        for passage in self.readable_passages(request).filter(content_id=obj.pk)[:20]:
            text = reader.read(passage).get("text")
            if text is not None:
                return text
        return None


class WspImportForm(forms.Form):
    dimension = forms.ModelChoiceField(
        queryset=Dimension.objects.none(),
        to_field_name="name",
        help_text="The Dimension the evidence is imported into (one you curate).",
    )
    document = forms.FileField(
        label="WSP v3 response",
        help_text="A .json file with one ResponseV3, or a .jsonl file with one per line.",
    )

    def __init__(self, *args, dimensions: QuerySet[Dimension], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["dimension"].queryset = dimensions
        if dimensions.count() == 1:
            self.fields["dimension"].initial = dimensions.first()

    def clean_document(self):
        upload = self.cleaned_data["document"]
        if not upload.name.lower().endswith((".json", ".jsonl")):
            raise forms.ValidationError("Upload a .json or .jsonl file.")
        if upload.size > MAX_UPLOAD_BYTES:
            raise forms.ValidationError("The file is larger than 8 MiB.")
        return upload


def _documents(upload) -> list[tuple[str, Any, str | None]]:
    """(label, document, parse error) for each document in the upload."""
    try:
        text = upload.read().decode("utf-8")
    except UnicodeDecodeError:
        return [(upload.name, None, "the file is not UTF-8")]
    if not upload.name.lower().endswith(".jsonl"):
        lines = [(upload.name, text)]
    else:
        lines = [(f"line {n}", line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    out: list[tuple[str, Any, str | None]] = []
    for label, chunk in lines:
        try:
            out.append((label, json.loads(chunk), None))
        except json.JSONDecodeError as exc:
            out.append((label, None, f"invalid JSON: {exc.msg} (line {exc.lineno})"))
    return out


def import_one(
    actor, dimension: Dimension, label: str, document: Any, error: str | None
) -> dict[str, Any]:
    if error is not None:
        return {"label": label, "ok": False, "code": "invalid_json", "detail": error}
    kwargs = {"actor": actor, "document": document, "dimension": dimension}
    try:
        # A savepoint per document: a refused one rolls back its own writes only and
        # leaves its refused event; the others stay imported.
        with refusal_audited(ACTION, **refusal_context(kwargs)):
            result = do_import_wsp_document(**kwargs)
    except Refusal as refusal:
        return {
            "label": label,
            "ok": False,
            "code": refusal.code,
            "detail": refusal.detail,
            "offenders": [o.as_dict() for o in refusal.offenders],
        }
    return {"label": label, "ok": True, "created": result.created, "report": result.report}


@admin.register(RetrievalObservation)
class RetrievalObservationAdmin(EvidenceReadOnlyAdmin):
    list_display = ("execution_id", "dimension", "capability", "status", "imported_at")
    list_filter = ("capability", "status", ("dimension", DimensionListFilter))
    search_fields = ("=execution_id", "request_id", "document_sha256")
    date_hierarchy = "imported_at"
    list_select_related = ("dimension",)
    change_list_template = "admin/evidence/retrievalobservation/change_list.html"
    reveals = dict.fromkeys(
        (
            "execution_id",
            "request_id",
            "document_sha256",
            "capability",
            "status",
            "dimension",
            "imported_at",
        ),
        ANY,
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request).defer("results", "provider_attempts")
        return _reader(request).scope(queryset, kind=Passage)

    def get_fields(self, request: HttpRequest, obj=None):
        # The envelope's projected texts are copies of passage text: they are read
        # through the passages, never shown here. The import report names the source
        # addresses whose text changed: shown where the Dimension's decisions show
        # every source's locator.
        names: list[Any] = [
            f.name for f in RetrievalObservation._meta.concrete_fields if f.name != "results"
        ]
        if obj is not None and not _shown_dimension_wide(request, obj.dimension_id, LOCATOR):
            names[names.index("report")] = _per_request(
                request, "report", "report", lambda r, o: WITHHELD
            )
        return names

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        return self.get_fields(request, obj)

    def has_import_permission(self, request: HttpRequest) -> bool:
        return holds(request, Role.CURATOR)

    def changelist_view(self, request: HttpRequest, extra_context=None):
        extra = {"can_import": self.has_import_permission(request), **(extra_context or {})}
        return super().changelist_view(request, extra_context=extra)

    def get_urls(self):
        view = self.admin_site.admin_view(self.import_view)
        return [path("import/", view, name="evidence_wsp_import"), *super().get_urls()]

    def _curated(self, request: HttpRequest) -> QuerySet[Dimension]:
        ids = [d.pk for d in _reader(request).dimensions(Role.CURATOR)]
        return Dimension.objects.filter(pk__in=ids, is_active=True)

    def import_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_import_permission(request):
            raise PermissionDenied
        results = None
        if request.method == "POST":
            form = WspImportForm(request.POST, request.FILES, dimensions=self._curated(request))
            if form.is_valid():
                upload = form.cleaned_data["document"]
                dimension = form.cleaned_data["dimension"]
                # The upload is one transaction, as the admin's change forms' POSTs are;
                # each document's body runs in it (import_one).
                with transaction.atomic():
                    results = [
                        import_one(request.user, dimension, *item) for item in _documents(upload)
                    ]
        else:
            form = WspImportForm(dimensions=self._curated(request))
        context = {
            **self.admin_site.each_context(request),
            "title": "Import WSP v3 responses",
            "opts": self.model._meta,
            "form": form,
            "results": results,
            "imported": sum(1 for r in results or [] if r["ok"]),
        }
        return TemplateResponse(request, "admin/evidence/wsp_import.html", context)


# PDF documents and their pages (registered there: this module is at its size).
from evidence import admin_documents  # noqa: E402, F401
