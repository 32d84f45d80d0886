"""Admin for passage masters (read-only) and the WSP v3 import page.

Sources, passages and content are masters imported from WSP responses: the admin
never edits them. Text, title and locators of a restricted source are shown as
withheld unless the user holds a role whose decisions include restricted sources.
The import page calls `evidence.services.import_wsp_document` once per document.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path
from simple_history.admin import SimpleHistoryAdmin

from evidence.choices import AccessLabel
from evidence.models import Content, Passage, RetrievalObservation, Source
from evidence.services import import_wsp_document
from policies.admin_base import ReadOnlyAdminMixin
from policies.choices import Role
from policies.models import DimensionMembership
from policies.refusals import Refusal

WITHHELD = "withheld"
# Roles whose internal decisions name restricted sources (policies.disclosure).
_RESTRICTED_READERS = (Role.CURATOR, Role.STEWARD, Role.ACCESS_STEWARD)
MAX_UPLOAD_BYTES = 8 * 1024 * 1024


def _roles(request: HttpRequest) -> set[str]:
    cached = getattr(request, "_evidence_roles", None)
    if cached is None:
        cached = set(
            DimensionMembership.objects.filter(
                user_id=request.user.pk, dimension__is_active=True
            ).values_list("role", flat=True)
        )
        request._evidence_roles = cached
    return cached


def _staff_with_role(request: HttpRequest) -> bool:
    return bool(request.user.is_active and request.user.is_staff and _roles(request))


class EvidenceReadOnlyAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    def has_module_permission(self, request: HttpRequest) -> bool:
        return _staff_with_role(request)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return _staff_with_role(request)


def _may_read_restricted(request: HttpRequest) -> bool:
    return bool(_roles(request) & {str(r) for r in _RESTRICTED_READERS})


@admin.register(Source)
class SourceAdmin(EvidenceReadOnlyAdmin, SimpleHistoryAdmin):
    list_display = ("canonical_url", "host", "access_label", "created_at")
    list_filter = ("access_label",)
    search_fields = ("canonical_url", "host")
    date_hierarchy = "created_at"


@admin.register(Passage)
class PassageAdmin(EvidenceReadOnlyAdmin, SimpleHistoryAdmin):
    list_display = ("passage_ref", "kind", "provider", "access_label", "execution_id", "created_at")
    list_filter = ("kind", "access_label", "provider")
    search_fields = ("passage_ref", "canonical_url", "locator", "observed_url", "execution_id")
    date_hierarchy = "created_at"
    list_select_related = ("source",)
    _protected = ("title", "locator", "observed_url", "canonical_url", "content")

    def get_fields(self, request: HttpRequest, obj=None):
        names = [f.name for f in Passage._meta.concrete_fields]
        restricted = obj is not None and obj.access_label == AccessLabel.RESTRICTED
        if restricted and not _may_read_restricted(request):
            # Replace protected values by one "withheld" line naming them.
            return [n for n in names if n not in self._protected] + ["withheld_fields"]
        return [*names, "text"]

    @admin.display(description="withheld")
    def withheld_fields(self, obj: Passage) -> str:
        return f"{WITHHELD}: " + ", ".join(self._protected) + " (restricted source)"

    @admin.display(description="text (literal)")
    def text(self, obj: Passage) -> str:
        return obj.text or "—"


@admin.register(Content)
class ContentAdmin(EvidenceReadOnlyAdmin):
    list_display = ("sha256", "length", "created_at")
    search_fields = ("=sha256",)
    date_hierarchy = "created_at"

    def get_fields(self, request: HttpRequest, obj=None):
        # Content can belong to a restricted source; only readers of those see text.
        if _may_read_restricted(request):
            return ["sha256", "length", "created_at", "text"]
        return ["sha256", "length", "created_at"]


class WspImportForm(forms.Form):
    document = forms.FileField(
        label="WSP v3 response",
        help_text="A .json file with one ResponseV3, or a .jsonl file with one per line.",
    )

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


def import_one(actor, label: str, document: Any, error: str | None) -> dict[str, Any]:
    if error is not None:
        return {"label": label, "ok": False, "code": "invalid_json", "detail": error}
    try:
        result = import_wsp_document(actor=actor, document=document)
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
    list_display = ("execution_id", "capability", "status", "imported_at")
    list_filter = ("capability", "status")
    search_fields = ("=execution_id", "request_id", "document_sha256")
    date_hierarchy = "imported_at"
    change_list_template = "admin/evidence/retrievalobservation/change_list.html"

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).defer("results", "provider_attempts")

    def has_import_permission(self, request: HttpRequest) -> bool:
        return bool(
            request.user.is_active and request.user.is_staff and Role.CURATOR in _roles(request)
        )

    def changelist_view(self, request: HttpRequest, extra_context=None):
        extra = {"can_import": self.has_import_permission(request), **(extra_context or {})}
        return super().changelist_view(request, extra_context=extra)

    def get_urls(self):
        view = self.admin_site.admin_view(self.import_view)
        return [path("import/", view, name="evidence_wsp_import"), *super().get_urls()]

    def import_view(self, request: HttpRequest) -> HttpResponse:
        # Not wrapped in transaction.atomic: each import is its own durable transaction.
        if not self.has_import_permission(request):
            raise PermissionDenied
        results = None
        if request.method == "POST":
            form = WspImportForm(request.POST, request.FILES)
            if form.is_valid():
                upload = form.cleaned_data["document"]
                results = [import_one(request.user, *item) for item in _documents(upload)]
        else:
            form = WspImportForm()
        context = {
            **self.admin_site.each_context(request),
            "title": "Import WSP v3 responses",
            "opts": self.model._meta,
            "form": form,
            "results": results,
            "imported": sum(1 for r in results or [] if r["ok"]),
        }
        return TemplateResponse(request, "admin/evidence/wsp_import.html", context)
