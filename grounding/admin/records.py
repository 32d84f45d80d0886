"""Read-only admin for the records bound to a link, scoped by Dimension roles.

Columns, fields and history values in a group the reader's disclosure decisions
withhold show "withheld"; search fields and filters declare the group they reveal
(`reveals`), so they select a record only where its link shows that group to the
reader (`grounding.admin.scoping`).
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from common.web.admin_base import (
    ANY,
    DimensionListFilter,
    DisclosedAdmin,
    ReadOnlyAdminMixin,
    holds,
)
from grounding.admin.scoping import WITHHELD, LinkScopedAdmin
from grounding.models import (
    AnchorObservation,
    Assessment,
    Disposal,
    EvidenceSet,
    EvidenceSetMembership,
    PassageBinding,
    Projection,
    StatementBinding,
    Withdrawal,
)
from policies.choices import DisclosableField as F
from policies.reader import reader_for

__all__ = ["WITHHELD", "holds"]

# What a record's own columns reveal: nothing withheld (the masked ones are not
# searched, filtered or sorted on).
_RECORD = dict.fromkeys(("link", "link__grounding_id", "link__dimension", "recorded_at"), ANY)


class LinkRecordAdmin(ReadOnlyAdminMixin, LinkScopedAdmin):
    list_filter = (("link__dimension", DimensionListFilter),)
    date_hierarchy = "recorded_at"
    list_select_related = ("link", "link__current_passage__passage")
    search_fields = ("link__grounding_id",)
    reveals = _RECORD


@admin.register(AnchorObservation)
class AnchorObservationAdmin(LinkRecordAdmin):
    list_display = ("observation_id", "link", "resolver_ref", "resolution_state", "recorded_at")
    list_filter = (("link__dimension", DimensionListFilter), "resolution_state")
    reveals = {
        **_RECORD,
        **dict.fromkeys(("observation_id", "resolver_ref", "resolution_state"), ANY),
    }
    # The offsets and digests of the matched text: part of the selector and the excerpt.
    masked = {"anchor_result": (F.ANCHOR_SELECTOR, F.PASSAGE_EXCERPT)}


@admin.register(Assessment)
class AssessmentAdmin(LinkRecordAdmin):
    list_display = ("assessment_ref", "link", "reviewer_ref", "method_ref", "verdict")
    list_filter = (("link__dimension", DimensionListFilter), "verdict", "reviewer_kind")
    search_fields = ("assessment_ref", "method_ref", "link__grounding_id")
    reveals = {
        **_RECORD,
        "assessment_ref": ANY,
        "method_ref": ANY,
        "verdict": F.ASSESSMENTS_VERDICT,
        "reviewer_kind": F.ASSESSMENTS_REVIEWER,
    }
    masked = {
        "verdict": F.ASSESSMENTS_VERDICT,
        "reviewer_ref": F.ASSESSMENTS_REVIEWER,
        "reviewer_kind": F.ASSESSMENTS_REVIEWER,
    }


@admin.register(Withdrawal)
class WithdrawalAdmin(LinkRecordAdmin):
    list_display = ("link", "reason", "authority_ref", "scope", "recorded_at")
    reveals = {**_RECORD, **dict.fromkeys(("authority_ref", "scope"), ANY)}


@admin.register(Disposal)
class DisposalAdmin(LinkRecordAdmin):
    # Every disposal's link is disposed, so no row shows here (records of a disposed
    # link are not shown); its receipt is on the link's tombstone.
    list_display = ("link", "receipt_ref", "policy_ref", "recorded_at")


@admin.register(Projection)
class ProjectionAdmin(LinkRecordAdmin):
    list_display = ("projection_id", "link", "format", "recipient_scope", "purpose", "created_at")
    list_filter = (("link__dimension", DimensionListFilter), "format")
    date_hierarchy = "created_at"
    reveals = {**_RECORD, **dict.fromkeys(("projection_id", "format", "created_at"), ANY)}


class BindingAdmin(ReadOnlyAdminMixin, LinkScopedAdmin):
    list_filter = (("link__dimension", DimensionListFilter),)
    date_hierarchy = "created_at"
    list_select_related = ("link", "link__current_passage__passage")
    _binding = {**_RECORD, "created_at": ANY, "bound_in_revision": ANY}


@admin.register(StatementBinding)
class StatementBindingAdmin(BindingAdmin):
    list_display = ("statement_ref", "answer_revision_ref", "link", "bound_in_revision")
    search_fields = ("statement_ref", "answer_revision_ref")
    reveals = {
        **BindingAdmin._binding,
        "statement_ref": F.STATEMENT,
        "answer_revision_ref": F.STATEMENT,
    }
    masked = {
        name: F.STATEMENT
        for name in (
            "statement_ref",
            "answer_revision_ref",
            "answer_revision_provisional",
            "answer_selector",
            "answer_representation",
            "claim_scope",
            "finalization_binding",
            "rebind_requirement",
        )
    }


@admin.register(PassageBinding)
class PassageBindingAdmin(BindingAdmin):
    list_display = ("passage_ref", "selector_profile", "link", "bound_in_revision")
    search_fields = ("passage_ref", "passage__canonical_url", "passage__locator")
    reveals = {
        **BindingAdmin._binding,
        "passage_ref": ANY,
        "selector_profile": ANY,
        "passage__canonical_url": F.PASSAGE_LOCATOR,
        "passage__locator": F.PASSAGE_LOCATOR,
    }
    masked = {
        "source_selector": F.ANCHOR_SELECTOR,
        "context_ref": F.ANCHOR_SELECTOR,
        "source_revision_binding": F.PASSAGE_LOCATOR,
        "retrieval_observation_ref": F.PASSAGE_LOCATOR,
        "representation_check": F.PASSAGE_EXCERPT,
    }


@admin.register(EvidenceSet)
class EvidenceSetAdmin(ReadOnlyAdminMixin, DisclosedAdmin):
    """A set belongs to a Dimension, not to one link: any role there shows it. Sets
    change through their own services (REST API); the admin shows them."""

    list_display = ("evidence_set_ref", "dimension", "revision", "created_at")
    list_filter = (("dimension", DimensionListFilter),)
    search_fields = ("evidence_set_ref",)
    list_select_related = ("dimension",)
    reveals = dict.fromkeys(("evidence_set_ref", "dimension", "revision", "created_at"), ANY)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        mine = [d.pk for d in reader_for(request).dimensions()]
        return super().get_queryset(request).filter(dimension_id__in=mine)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return holds(request)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return holds(request, dimension_id=obj.dimension_id if obj else None)


@admin.register(EvidenceSetMembership)
class EvidenceSetMembershipAdmin(ReadOnlyAdminMixin, LinkScopedAdmin):
    list_display = ("evidence_set", "link", "membership_role", "added_in_set_revision")
    list_filter = ("membership_role",)
    list_select_related = ("evidence_set", "link")
    reveals = {
        "membership_role": ANY,
        "evidence_set": ANY,
        "link": ANY,
        "added_in_set_revision": ANY,
    }
