"""Read-only admin for the records bound to a link, scoped by Dimension roles.

Columns in a group the reader's disclosure decisions withhold show "withheld".
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import Http404, HttpRequest
from simple_history.admin import SimpleHistoryAdmin

from grounding.models import (
    AnchorObservation,
    Assessment,
    Disposal,
    EvidenceSet,
    EvidenceSetMembership,
    GroundingLink,
    PassageBinding,
    Projection,
    StatementBinding,
    Withdrawal,
)
from policies.choices import DisclosableField as F
from policies.reader import reader_for
from policies.web.admin_base import ReadOnlyAdminMixin

WITHHELD = "withheld"


def holds(request: HttpRequest, *roles: str, dimension_id: int | None = None) -> bool:
    """Staff holding one of `roles` (any role if none given), in one Dimension or any."""
    if not (request.user.is_active and request.user.is_staff):
        return False
    return reader_for(request).holds(*roles, dimension_id=dimension_id)


def withheld_for(request: HttpRequest, link: GroundingLink) -> list[str] | None:
    """What the reader withholds of `link` (None: nothing of it is readable)."""
    return reader_for(request).withheld(link)


class RoleScopedMixin:
    """View rights from Dimension roles; rows limited to links the user may read."""

    link_path = "link__"  # from this model to its GroundingLink ("" for the link)

    def _link_of(self, obj) -> GroundingLink:
        return obj if isinstance(obj, GroundingLink) else obj.link

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # Records of a disposed link are not shown: only the link's tombstone remains.
        return reader_for(request).scope(
            super().get_queryset(request),
            kind=GroundingLink,
            path=self.link_path,
            tombstones=not self.link_path,
        )

    def has_module_permission(self, request: HttpRequest) -> bool:
        return holds(request)

    def history_view(self, request: HttpRequest, object_id: str, extra_context=None):
        # simple-history finds the rows without get_queryset: scope them first.
        try:
            readable = self.get_queryset(request).filter(pk=object_id).exists()
        except (ValueError, ValidationError):
            readable = False
        if not readable:
            raise Http404("no readable record has this id")
        return super().history_view(request, object_id, extra_context)

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        # A past version's form would show stored values outside the reader; the
        # link's own history (revisions and their comparison) is the way to the past.
        raise Http404("past versions of link records are read through the link's history")

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is None:
            return holds(request)
        return holds(request, dimension_id=self._link_of(obj).dimension_id)


def _show(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return "—" if value in (None, "") else str(value)


class DisclosedRecordAdmin(RoleScopedMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    """Read-only records of a link; columns in a withheld group show "withheld"."""

    masked: dict[str, str] = {}  # column -> disclosable group

    def _cell(self, request: HttpRequest, name: str) -> Callable[[Any], str]:
        # One closure per request and column: Django compares field entries by identity.
        cells = request.__dict__.setdefault("_grounding_cells", {})
        key = (type(self).__name__, name)
        if key not in cells:
            group = self.masked[name]

            def cell(obj) -> str:
                withheld = withheld_for(request, self._link_of(obj))
                if withheld is None or group in withheld:
                    return WITHHELD
                return _show(getattr(obj, name))

            cell.short_description = name.replace("_", " ")  # type: ignore[attr-defined]
            cell.__name__ = name
            cells[key] = cell
        return cells[key]

    def _swap(self, request: HttpRequest, names) -> list:
        return [self._cell(request, n) if n in self.masked else n for n in names]

    def get_list_display(self, request: HttpRequest):
        return self._swap(request, self.list_display)

    def get_fields(self, request: HttpRequest, obj=None):
        names = [f.name for f in self.model._meta.concrete_fields]
        return self._swap(request, names)


class LinkRecordAdmin(DisclosedRecordAdmin):
    list_filter = ("link__dimension",)
    date_hierarchy = "recorded_at"
    list_select_related = ("link", "link__current_passage__passage")
    search_fields = ("link__grounding_id",)


@admin.register(AnchorObservation)
class AnchorObservationAdmin(LinkRecordAdmin):
    list_display = ("observation_id", "link", "resolver_ref", "resolution_state", "recorded_at")
    list_filter = ("link__dimension", "resolution_state")


@admin.register(Assessment)
class AssessmentAdmin(LinkRecordAdmin):
    list_display = ("assessment_ref", "link", "reviewer_ref", "method_ref", "verdict")
    list_filter = ("link__dimension", "verdict", "reviewer_kind")
    search_fields = ("assessment_ref", "method_ref", "link__grounding_id")
    masked = {
        "verdict": F.ASSESSMENTS_VERDICT,
        "reviewer_ref": F.ASSESSMENTS_REVIEWER,
        "reviewer_kind": F.ASSESSMENTS_REVIEWER,
    }


@admin.register(Withdrawal)
class WithdrawalAdmin(LinkRecordAdmin):
    list_display = ("link", "reason", "authority_ref", "scope", "recorded_at")


@admin.register(Disposal)
class DisposalAdmin(LinkRecordAdmin):
    list_display = ("link", "receipt_ref", "policy_ref", "recorded_at")


@admin.register(Projection)
class ProjectionAdmin(LinkRecordAdmin):
    list_display = ("projection_id", "link", "format", "recipient_scope", "purpose", "created_at")
    list_filter = ("link__dimension", "format")
    date_hierarchy = "created_at"


class BindingAdmin(DisclosedRecordAdmin, SimpleHistoryAdmin):
    list_filter = ("link__dimension",)
    date_hierarchy = "created_at"
    list_select_related = ("link", "link__current_passage__passage")


@admin.register(StatementBinding)
class StatementBindingAdmin(BindingAdmin):
    list_display = ("statement_ref", "answer_revision_ref", "link", "bound_in_revision")
    search_fields = ("statement_ref", "answer_revision_ref")
    masked = {
        name: F.STATEMENT
        for name in (
            "statement_ref",
            "answer_revision_ref",
            "answer_selector",
            "answer_representation",
            "claim_scope",
            "finalization_binding",
        )
    }


@admin.register(PassageBinding)
class PassageBindingAdmin(BindingAdmin):
    list_display = ("passage_ref", "selector_profile", "link", "bound_in_revision")
    search_fields = ("passage_ref", "passage__canonical_url", "passage__locator")
    masked = {
        "source_selector": F.ANCHOR_SELECTOR,
        "context_ref": F.ANCHOR_SELECTOR,
        "source_revision_binding": F.PASSAGE_LOCATOR,
        "retrieval_observation_ref": F.PASSAGE_LOCATOR,
        "representation_check": F.PASSAGE_EXCERPT,
    }


@admin.register(EvidenceSet)
class EvidenceSetAdmin(DisclosedRecordAdmin, SimpleHistoryAdmin):
    # Sets change through their own services (REST API); the admin shows them.
    link_path = ""
    list_display = ("evidence_set_ref", "dimension", "revision", "created_at")
    list_filter = ("dimension",)
    search_fields = ("evidence_set_ref",)
    list_select_related = ("dimension",)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # A set belongs to a Dimension, not to one link.
        return admin.ModelAdmin.get_queryset(self, request).filter(
            dimension_id__in=[d.pk for d in reader_for(request).dimensions()]
        )

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return holds(request, dimension_id=obj.dimension_id if obj else None)


@admin.register(EvidenceSetMembership)
class EvidenceSetMembershipAdmin(DisclosedRecordAdmin, SimpleHistoryAdmin):
    list_display = ("evidence_set", "link", "membership_role", "added_in_set_revision")
    list_filter = ("membership_role",)
    list_select_related = ("evidence_set", "link")
