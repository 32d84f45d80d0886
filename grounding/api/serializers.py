"""Shapes of the grounding API and the one way a link is rendered.

Request serializers document bodies for OpenAPI; the services validate them (every
offender with a JSON pointer), so views pass the parsed JSON straight through.
Output is what the request's reader (`policies.reader`, `grounding.reader`) shows.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from grounding.choices import (
    DisplayState,
    MembershipRole,
    ProjectionFormat,
    RebindRequirement,
    RecheckState,
    RecordState,
    ResolutionState,
    ReviewerKind,
    SupportKind,
    UseBasis,
    Verdict,
)
from policies.choices import DisclosableField

# -- requests (documentation of what the services accept)


def _obj(help_text: str = "", **kwargs: Any) -> serializers.JSONField:
    return serializers.DictField(help_text=help_text, **kwargs)


class StatementSerializer(serializers.Serializer):
    statement_ref = serializers.CharField(max_length=512)
    answer_revision_ref = serializers.CharField(max_length=512)
    answer_revision_provisional = serializers.BooleanField(required=False)
    answer_selector = _obj("W3C selector into the answer text.")
    answer_representation = _obj()
    claim_scope = _obj()
    finalization_binding = serializers.CharField(required=False, allow_blank=True)
    rebind_requirement = serializers.ChoiceField(choices=RebindRequirement.choices, required=False)


class PassageSerializer(serializers.Serializer):
    passage_id = serializers.UUIDField(
        required=False, help_text="An imported evidence passage (or give passage_ref)."
    )
    passage_ref = serializers.CharField(required=False)
    source_revision_binding = _obj(required=False)
    retrieval_observation_ref = serializers.CharField(required=False)


class AnchorSerializer(serializers.Serializer):
    source_selector = _obj("TextQuoteSelector, TextPositionSelector or a WSP segment ref.")
    selector_profile = serializers.CharField()
    context_ref = serializers.CharField(required=False, allow_blank=True)
    transformation_ref = serializers.CharField(required=False, allow_blank=True)


class SupportSerializer(serializers.Serializer):
    support_kind = serializers.ChoiceField(choices=SupportKind.choices)
    support_scope = _obj()
    support_limits = _obj(required=False, allow_null=True)
    use_basis = serializers.ChoiceField(choices=UseBasis.choices, required=False)
    generation_evidence_ref = serializers.CharField(required=False, allow_blank=True)


class TimeSerializer(serializers.Serializer):
    asserted_at = serializers.DateTimeField(required=False)
    applicability_interval = _obj(required=False, allow_null=True)
    statement_time_ref = serializers.CharField(required=False, allow_blank=True)
    review_due = serializers.DateTimeField(required=False)
    time_uncertainty = _obj(required=False)


class RegisterSerializer(serializers.Serializer):
    dimension = serializers.CharField()
    profile = serializers.CharField(help_text="name@version of a published profile.")
    owner_ref = serializers.CharField()
    master_ref = serializers.CharField(required=False)
    statement = StatementSerializer()
    passage = PassageSerializer()
    anchor = AnchorSerializer()
    support = SupportSerializer()
    time = TimeSerializer(required=False)


class BulkRegisterSerializer(serializers.Serializer):
    items = RegisterSerializer(many=True)


class ReviseSerializer(serializers.Serializer):
    revision_reason = serializers.CharField()
    expected_revision = serializers.IntegerField(min_value=1, required=False)
    statement = _obj(required=False)
    passage = _obj(required=False)
    anchor = _obj(required=False)
    support = _obj(required=False)
    time = _obj(required=False)
    owner_ref = serializers.CharField(required=False)
    record_state = serializers.ChoiceField(choices=["candidate", "admitted"], required=False)
    recheck_state = serializers.ChoiceField(choices=["pending_review"], required=False)
    change_ref = serializers.CharField(required=False)


class AssessmentSerializer(serializers.Serializer):
    expected_revision = serializers.IntegerField(min_value=1, required=False)
    assessment_ref = serializers.CharField()
    reviewer_ref = serializers.CharField()
    reviewer_kind = serializers.ChoiceField(choices=ReviewerKind.choices)
    authority_ref = serializers.CharField(required=False)
    method_ref = serializers.CharField()
    verdict = serializers.ChoiceField(choices=Verdict.choices)
    assessed_inputs = _obj("Must name grounding_revision: the link's current revision.")
    assessed_at = serializers.DateTimeField(required=False)


class AnchorObservationSerializer(serializers.Serializer):
    expected_revision = serializers.IntegerField(min_value=1, required=False)
    resolver = serializers.ChoiceField(
        choices=["builtin"], required=False, help_text="Run the reference resolver here."
    )
    status = serializers.ChoiceField(
        choices=["resolved", "ambiguous", "unresolved"], required=False
    )
    match_count = serializers.IntegerField(min_value=0, required=False)
    matches = serializers.ListField(child=_obj(), required=False)
    resolver_ref = serializers.CharField(required=False)
    text_sha256 = serializers.CharField(required=False)
    reason = serializers.CharField(required=False)


class WithdrawalSerializer(serializers.Serializer):
    expected_revision = serializers.IntegerField(min_value=1, required=False)
    reason = serializers.CharField()
    authority_ref = serializers.CharField()
    scope = serializers.CharField(required=False)
    decision_ref = serializers.CharField(required=False)


class DisposalSerializer(serializers.Serializer):
    expected_revision = serializers.IntegerField(min_value=1, required=False)
    receipt_ref = serializers.CharField()
    policy_ref = serializers.CharField()


class ProjectionQuerySerializer(serializers.Serializer):
    """Parsed here because the stored projection row bounds these lengths."""

    recipient = serializers.CharField(max_length=255)
    purpose = serializers.CharField(max_length=128)
    format = serializers.ChoiceField(
        choices=ProjectionFormat.choices, default=ProjectionFormat.NATIVE.value
    )


# -- responses


class LinkSerializer(serializers.Serializer):
    """The link as read (API.md). Groups a decision does not cover are absent and
    named in `withheld`."""

    grounding_id = serializers.UUIDField()
    revision = serializers.IntegerField()
    record_state = serializers.ChoiceField(choices=RecordState.choices)
    recheck_state = serializers.ChoiceField(choices=RecheckState.choices)
    display_state = serializers.ChoiceField(choices=DisplayState.choices)
    displayed_verdict = serializers.ChoiceField(choices=Verdict.choices, required=False)
    dimension = serializers.CharField()
    profile = serializers.CharField()
    owner_ref = serializers.CharField()
    statement = _obj(required=False)
    passage = _obj(help_text="Includes resolution_state (one of the profile's states).")
    anchor = _obj(help_text="Includes anchor_result (null until observed).")
    support = _obj(required=False)
    assessments = serializers.ListField(child=_obj())
    evidence_sets = serializers.ListField(child=_obj())
    time = _obj(help_text="Includes observed_at.")
    withdrawal = _obj(allow_null=True)
    withheld = serializers.ListField(child=serializers.ChoiceField(DisclosableField.choices))


class BulkResultSerializer(serializers.Serializer):
    items = LinkSerializer(many=True)


class _RecordResult(serializers.Serializer):
    grounding_id = serializers.UUIDField()
    revision = serializers.IntegerField(help_text="The link's revision after the operation.")
    link = LinkSerializer(allow_null=True, help_text="The link as the actor may now read it.")


class AssessmentResultSerializer(_RecordResult):
    assessment_id = serializers.UUIDField()
    assessment_ref = serializers.CharField()
    grounding_revision = serializers.IntegerField()
    recorded_revision = serializers.IntegerField()


class AnchorObservationResultSerializer(_RecordResult):
    observation_id = serializers.UUIDField()
    resolver_ref = serializers.CharField()
    resolution_state = serializers.ChoiceField(choices=ResolutionState.choices)
    anchor_result = _obj()


class WithdrawalResultSerializer(_RecordResult):
    withdrawal_id = serializers.UUIDField()
    reason = serializers.CharField()
    authority_ref = serializers.CharField()
    scope = serializers.CharField()


class DisposalResultSerializer(_RecordResult):
    disposal_id = serializers.UUIDField()
    receipt_ref = serializers.CharField()
    policy_ref = serializers.CharField()
    purged = serializers.DictField(child=serializers.IntegerField())


class RevisionEntrySerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    recorded_at = serializers.DateTimeField()
    actor = serializers.CharField(allow_null=True)
    reason = serializers.CharField(allow_null=True)


class RevisionListSerializer(serializers.Serializer):
    grounding_id = serializers.UUIDField()
    revision = serializers.IntegerField()
    results = RevisionEntrySerializer(many=True)


class ProjectionResultSerializer(serializers.Serializer):
    """Native: `fields`. Export formats replace `fields` by the format's document."""

    grounding_id = serializers.UUIDField()
    revision = serializers.IntegerField()
    display_state = serializers.ChoiceField(choices=DisplayState.choices)
    decision_ref = serializers.CharField()
    format = serializers.ChoiceField(choices=ProjectionFormat.choices)
    fields = _obj(required=False)
    withheld = serializers.ListField(child=serializers.CharField())
    loss_report = serializers.ListField(child=_obj())
    projection_ref = serializers.CharField()
    sha256 = serializers.CharField()


class MemberSerializer(serializers.Serializer):
    grounding_id = serializers.UUIDField()
    membership_role = serializers.ChoiceField(choices=MembershipRole.choices)


class EvidenceSetCreateSerializer(serializers.Serializer):
    evidence_set_ref = serializers.CharField()
    dimension = serializers.CharField()
    members = MemberSerializer(many=True, required=False)
    combination_rule_ref = serializers.CharField(required=False)
    dependence_ref = serializers.CharField(required=False)
    declared_missing_members = serializers.ListField(child=serializers.CharField(), required=False)


class MemberAddSerializer(MemberSerializer):
    expected_revision = serializers.IntegerField(min_value=1, required=False)


class EvidenceSetSerializer(serializers.Serializer):
    evidence_set_ref = serializers.CharField()
    dimension = serializers.CharField()
    revision = serializers.IntegerField()
    combination_rule_ref = serializers.CharField(allow_blank=True)
    dependence_ref = serializers.CharField(allow_blank=True)
    set_assessment_ref = serializers.CharField(allow_blank=True)
    set_assessment_revision = serializers.IntegerField(allow_null=True)
    declared_missing_members = serializers.ListField(child=serializers.CharField())
    members = MemberSerializer(many=True)
    missing_members = serializers.ListField(child=serializers.CharField())
    complete = serializers.BooleanField()


class ApiRootSerializer(serializers.Serializer):
    collections = serializers.DictField(child=serializers.CharField())
    schema = serializers.CharField()
    docs = serializers.CharField()
