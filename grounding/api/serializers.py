"""Shapes of the grounding API's answers, and the query the projection parses.

Request bodies are declared in `grounding.bodies` (the services validate them). Every
answer is rendered by one of these serializers; what of a link a reader sees is the
reader's (`policies.reader`, `grounding.reader`), so link documents pass through them
unchanged (`LinkDocumentField`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from common.web.openapi_strict import documented_by
from grounding.api.serializers_link import AssessmentReadSerializer, LinkDocumentField

# Re-exported: the projection view names it with the other answers.
from grounding.api.serializers_projection import ProjectionResultSerializer  # noqa: F401
from grounding.choices import MembershipRole, ProjectionFormat, RecordState, ResolutionState
from grounding.models import EvidenceSet, EvidenceSetMembership, GroundingLink
from grounding.values.fields import structured


class ProjectionQuerySerializer(serializers.Serializer):
    """Parsed here because the stored projection row bounds these lengths."""

    recipient = serializers.CharField(max_length=255)
    purpose = serializers.CharField(max_length=128)
    format = serializers.ChoiceField(
        choices=ProjectionFormat.choices, default=ProjectionFormat.NATIVE.value
    )


# -- responses


class BulkResultSerializer(serializers.Serializer):
    items = serializers.ListField(child=LinkDocumentField())


@dataclass(frozen=True)
class Recorded:
    """What a record's POST answers about: the record, its link after the operation,
    the link as the actor may now read it (None when no decision covers them) and, for
    an assessment, the record as that document shows it."""

    record: Any
    link: GroundingLink
    document: dict[str, Any] | None
    shown: dict[str, Any] = field(default_factory=dict)


class _RecordResult(serializers.Serializer):
    grounding_id = serializers.UUIDField(source="link.grounding_id")
    revision = serializers.IntegerField(
        source="link.revision", help_text="The link's revision after the operation."
    )
    link = LinkDocumentField(
        source="document", allow_null=True, help_text="The link as the actor may now read it."
    )


class _AssessmentResultSchema(_RecordResult):
    """What AssessmentResultSerializer renders: the record's ids and revisions, and its
    other members as the link document shows them (each absent when withheld, all
    absent when the actor may not read the link)."""

    assessment_id = serializers.UUIDField()
    assessment_ref = serializers.CharField()
    grounding_revision = serializers.IntegerField()
    recorded_revision = serializers.IntegerField()

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        for name, shown in AssessmentReadSerializer().get_fields().items():
            if name not in fields:
                shown.required = False
                fields[name] = shown
        return fields


@documented_by(_AssessmentResultSchema)
class AssessmentResultSerializer(_RecordResult):
    assessment_id = serializers.UUIDField(source="record.assessment_id")
    assessment_ref = serializers.CharField(source="record.assessment_ref")
    grounding_revision = serializers.IntegerField(source="record.grounding_revision")
    recorded_revision = serializers.IntegerField(source="record.recorded_revision")

    def to_representation(self, result: Recorded) -> dict[str, Any]:
        # The record's other members as the link document shows them: what the
        # actor's decisions withhold there (verdict, reviewer) stays withheld here.
        return {**result.shown, **super().to_representation(result)}


class AnchorObservationResultSerializer(_RecordResult):
    observation_id = serializers.UUIDField(source="record.observation_id")
    resolver_ref = serializers.CharField(source="record.resolver_ref")
    resolution_state = serializers.ChoiceField(
        source="record.resolution_state", choices=ResolutionState.choices
    )
    anchor_result = structured(
        "anchor_result",
        source="record.anchor_result",
        required=False,
        help_text="Absent when anchor.selector or passage.excerpt is withheld from the actor.",
    )

    def to_representation(self, result: Recorded) -> dict[str, Any]:
        out = super().to_representation(result)
        # Offsets and digests of the matched text go with anchor.selector and
        # passage.excerpt (API.md "Tenancy"): as the link document shows them.
        if "anchor_result" not in (result.document or {}).get("anchor", {}):
            out.pop("anchor_result", None)
        return out


class WithdrawalResultSerializer(_RecordResult):
    withdrawal_id = serializers.UUIDField(source="record.withdrawal_id")
    reason = serializers.CharField(source="record.reason")
    authority_ref = serializers.CharField(source="record.authority_ref")
    scope = serializers.CharField(source="record.scope")
    decision_ref = serializers.CharField(
        source="record.decision_ref", allow_blank=True, allow_null=True
    )


class DisposalResultSerializer(_RecordResult):
    disposal_id = serializers.UUIDField(source="record.disposal_id")
    receipt_ref = serializers.CharField(source="record.receipt_ref")
    policy_ref = serializers.CharField(source="record.policy_ref")
    purged = serializers.DictField(source="record.purged", child=serializers.IntegerField())


class RevisionEntrySerializer(serializers.Serializer):
    """One revision, from its (last) history row."""

    revision = serializers.IntegerField()
    recorded_at = serializers.DateTimeField(source="history_date")
    actor = serializers.CharField(source="history_user.get_username", allow_null=True)
    reason = serializers.CharField(source="history_change_reason", allow_null=True)


@dataclass(frozen=True)
class History:
    link: GroundingLink
    rows: list[Any]  # one history row per revision, oldest first


class RevisionHistorySerializer(serializers.Serializer):
    grounding_id = serializers.UUIDField(source="link.grounding_id")
    revision = serializers.IntegerField(source="link.revision")
    results = RevisionEntrySerializer(source="rows", many=True, required=False)


class RevisionListSerializer(RevisionHistorySerializer):
    """The revisions, oldest first; a disposed link answers its tombstone instead
    (grounding_id, revision, record_state "disposed", dimension, receipt_ref, …)."""

    record_state = serializers.ChoiceField(
        choices=RecordState.choices, required=False, help_text="Tombstone only: disposed."
    )
    dimension = serializers.CharField(required=False, help_text="Tombstone only.")
    receipt_ref = serializers.CharField(required=False, help_text="Tombstone only.")
    policy_ref = serializers.CharField(required=False, help_text="Tombstone only.")
    observed_at = serializers.DateTimeField(
        required=False, allow_null=True, help_text="Tombstone only."
    )
    disposed_at = serializers.DateTimeField(
        required=False, allow_null=True, help_text="Tombstone only."
    )


@extend_schema_serializer(component_name="Member")
class MembershipSerializer(serializers.Serializer):
    # A current membership, in the terms a body names a member in (bodies.MemberSerializer).
    grounding_id = serializers.UUIDField(source="link_id")
    membership_role = serializers.ChoiceField(choices=MembershipRole.choices)


@extend_schema_field({"type": "array", "items": {"type": "string"}})
class StoredRefsField(serializers.JSONField):
    """A stored list of references (a set's declared missing members), rendered exactly
    as stored."""


@dataclass(frozen=True)
class SetState:
    """An evidence set as read now: the row, its current memberships, what is missing."""

    evidence_set: EvidenceSet
    members: list[EvidenceSetMembership]
    missing_members: list[str]

    @property
    def complete(self) -> bool:
        return not self.missing_members


class EvidenceSetSerializer(serializers.Serializer):
    evidence_set_ref = serializers.CharField(source="evidence_set.evidence_set_ref")
    dimension = serializers.CharField(source="evidence_set.dimension.name")
    revision = serializers.IntegerField(source="evidence_set.revision")
    combination_rule_ref = serializers.CharField(
        source="evidence_set.combination_rule_ref", allow_blank=True
    )
    dependence_ref = serializers.CharField(source="evidence_set.dependence_ref", allow_blank=True)
    set_assessment_ref = serializers.CharField(
        source="evidence_set.set_assessment_ref", allow_blank=True
    )
    set_assessment_revision = serializers.IntegerField(
        source="evidence_set.set_assessment_revision", allow_null=True
    )
    declared_missing_members = StoredRefsField(source="evidence_set.declared_missing_members")
    members = MembershipSerializer(many=True)
    missing_members = StoredRefsField()
    complete = serializers.BooleanField()


class ApiRootSerializer(serializers.Serializer):
    collections = serializers.DictField(child=serializers.CharField())
    schema = serializers.CharField()
    docs = serializers.CharField()
