"""Shapes of the grounding API and the one way a link is rendered.

Request serializers document bodies for OpenAPI; the services validate them (every
offender with a JSON pointer), so views pass the parsed JSON straight through.
Output is what the request's reader (`policies.reader`, `grounding.reader`) shows.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from grounding.api.schema_values import structured
from grounding.api.serializers_link import LinkSerializer, ProjectedFieldsSerializer
from grounding.choices import (
    DisplayState,
    MembershipRole,
    ProjectionFormat,
    RebindRequirement,
    RecordState,
    ResolutionState,
    ReviewerKind,
    SupportKind,
    UseBasis,
    Verdict,
)
from policies.choices import DisclosableField

EXPECTED_REVISION = (
    "The revision you expect, instead of If-Match (for clients that cannot set headers)."
)

# -- requests (documentation of what the services accept)
# Bodies and their groups are closed: the services refuse a member they do not know
# (400 unknown_field), and `grounding.api.schema.close_request_bodies` says so. An
# optional member may be null (the same as leaving it out).

REF_LENGTH = 512  # grounding.services.inputs: every reference fits 512 characters


def _ref(**kwargs: Any) -> serializers.CharField:
    """A required reference: a non-empty string (not only spaces) of ≤512 characters."""
    return serializers.CharField(max_length=REF_LENGTH, **kwargs)


def _opt_ref(**kwargs: Any) -> serializers.CharField:
    return serializers.CharField(
        max_length=REF_LENGTH, required=False, allow_blank=True, allow_null=True, **kwargs
    )


def _opt(kind: str, **kwargs: Any) -> serializers.Field:
    return structured(kind, required=False, allow_null=True, **kwargs)


def _opt_choice(choices, **kwargs: Any) -> serializers.ChoiceField:
    return serializers.ChoiceField(choices=choices, required=False, allow_null=True, **kwargs)


def _opt_instant(**kwargs: Any) -> serializers.DateTimeField:
    return serializers.DateTimeField(required=False, allow_null=True, **kwargs)


class StatementSerializer(serializers.Serializer):
    statement_ref = _ref()
    answer_revision_ref = _ref()
    answer_revision_provisional = serializers.BooleanField(required=False, allow_null=True)
    answer_selector = structured("selector", help_text="W3C selector into the answer text.")
    answer_representation = structured("answer_representation")
    claim_scope = structured("claim_scope")
    finalization_binding = _opt_ref()
    rebind_requirement = _opt_choice(RebindRequirement.choices)


class PassageSerializer(serializers.Serializer):
    """An imported evidence passage ({"passage_id"}) or an external binding
    ({"passage_ref", "source_revision_binding", …})."""

    passage_id = serializers.UUIDField(
        required=False, allow_null=True, help_text="An imported evidence passage."
    )
    passage_ref = _opt_ref(help_text="An external passage (instead of passage_id).")
    source_revision_binding = _opt("source_revision_binding")
    retrieval_observation_ref = _opt_ref()
    representation_check = _opt("representation_check")


class AnchorSerializer(serializers.Serializer):
    source_selector = structured(
        "selector", help_text="TextQuoteSelector, TextPositionSelector or a WSP segment ref."
    )
    selector_profile = _ref(help_text="One of the profile's selector_profiles.")
    context_ref = _opt_ref()
    transformation_ref = _opt_ref()


class SupportSerializer(serializers.Serializer):
    support_kind = serializers.ChoiceField(
        choices=SupportKind.choices, help_text="One of the profile's support_vocabulary."
    )
    support_scope = structured("support_scope")
    support_limits = _opt("support_limits")
    use_basis = _opt_choice(UseBasis.choices)
    generation_evidence_ref = _opt_ref()


class TimeSerializer(serializers.Serializer):
    asserted_at = _opt_instant()
    applicability_interval = _opt("applicability_interval")
    statement_time_ref = _opt_ref()
    review_due = _opt_instant()
    time_uncertainty = _opt("time_uncertainty")


class DisclosureSerializer(serializers.Serializer):
    recipient_scope = _opt("recipient_scope")
    redaction_profile = _opt_ref()
    rights_ref = _opt_ref()


class RegisterSerializer(serializers.Serializer):
    dimension = serializers.CharField(help_text="A Dimension where you are a curator.")
    profile = serializers.CharField(help_text="name@version of a published profile.")
    owner_ref = serializers.CharField(max_length=255)
    master_ref = serializers.CharField(
        max_length=512, required=False, allow_blank=True, allow_null=True
    )
    statement = StatementSerializer()
    passage = PassageSerializer()
    anchor = AnchorSerializer()
    support = SupportSerializer()
    time = TimeSerializer(required=False, allow_null=True)
    related_link_refs = _opt("related_link_refs")
    identity_decision = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    disclosure = DisclosureSerializer(required=False, allow_null=True)


class BulkRegisterSerializer(serializers.Serializer):
    items = RegisterSerializer(many=True)


def _partial(serializer_class: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """The same group for PATCH: every member optional (the group is replaced, so the
    service still requires what the group itself requires)."""
    fields = {}
    for name, field in serializer_class().get_fields().items():
        field.required = False
        fields[name] = field
    name = serializer_class.__name__.replace("Serializer", "PatchSerializer")
    return type(name, (serializers.Serializer,), fields)


class ReviseSerializer(serializers.Serializer):
    """Any of the groups, merged into the link's (a required member present in a group
    cannot be emptied), and a reason. Replacing statement, passage or anchor members
    makes earlier assessments stale."""

    revision_reason = serializers.CharField()
    expected_revision = serializers.IntegerField(
        min_value=1, max_value=999_999_999, required=False, help_text=EXPECTED_REVISION
    )
    statement = _partial(StatementSerializer)(required=False)
    passage = _partial(PassageSerializer)(required=False)
    anchor = _partial(AnchorSerializer)(required=False)
    support = _partial(SupportSerializer)(required=False)
    time = _partial(TimeSerializer)(required=False)
    owner_ref = serializers.CharField(max_length=255, required=False)
    record_state = serializers.ChoiceField(choices=["candidate", "admitted"], required=False)
    recheck_state = serializers.ChoiceField(choices=["pending_review"], required=False)
    change_ref = serializers.CharField(max_length=REF_LENGTH, required=False, allow_blank=True)
    related_link_refs = _opt("related_link_refs")
    identity_decision = serializers.CharField(required=False, allow_blank=True)
    disclosure = _partial(DisclosureSerializer)(required=False)


def _expected_revision() -> serializers.IntegerField:
    return serializers.IntegerField(
        min_value=1, max_value=999_999_999, required=False, help_text=EXPECTED_REVISION
    )


class AssessmentSerializer(serializers.Serializer):
    expected_revision = _expected_revision()
    assessment_ref = _ref()
    reviewer_ref = _ref()
    reviewer_kind = serializers.ChoiceField(choices=ReviewerKind.choices)
    authority_ref = _opt_ref()
    method_ref = _ref()
    verdict = serializers.ChoiceField(choices=Verdict.choices)
    assessed_inputs = structured(
        "assessed_inputs",
        help_text="grounding_revision must be the link's current revision (else 409 "
        "assessment_input_mismatch).",
    )
    assessed_at = _opt_instant()
    rationale_ref = _opt_ref()
    selection_basis_ref = _opt_ref()
    metric_binding = _opt("metric_binding")
    coverage_population = _opt("coverage_population")
    uncertainty_binding = _opt("uncertainty_binding")
    structural_report_ref = _opt_ref()


class _MatchSerializer(serializers.Serializer):
    start = serializers.IntegerField(min_value=0)
    end = serializers.IntegerField(min_value=0)


class AnchorObservationSerializer(serializers.Serializer):
    """Either {"resolver": "builtin", "reason"?}: the reference resolver runs here, or a
    supplied observation (the anchor_result members: status, match_count, matches,
    resolver_ref, text_sha256, reason)."""

    expected_revision = _expected_revision()
    resolver = serializers.ChoiceField(
        choices=["builtin"], required=False, help_text="Run the reference resolver here."
    )
    status = serializers.ChoiceField(
        choices=["resolved", "ambiguous", "unresolved"], required=False
    )
    match_count = serializers.IntegerField(min_value=0, required=False)
    matches = _MatchSerializer(many=True, required=False)
    resolver_ref = serializers.CharField(required=False)
    text_sha256 = serializers.RegexField(r"^[0-9a-f]{64}$", required=False)
    reason = serializers.CharField(required=False)


class WithdrawalSerializer(serializers.Serializer):
    expected_revision = _expected_revision()
    reason = _ref()
    authority_ref = _ref()
    scope = _opt_ref()
    decision_ref = _opt_ref()


class DisposalSerializer(serializers.Serializer):
    expected_revision = _expected_revision()
    receipt_ref = _ref()
    policy_ref = _ref()


class ProjectionQuerySerializer(serializers.Serializer):
    """Parsed here because the stored projection row bounds these lengths."""

    recipient = serializers.CharField(max_length=255)
    purpose = serializers.CharField(max_length=128)
    format = serializers.ChoiceField(
        choices=ProjectionFormat.choices, default=ProjectionFormat.NATIVE.value
    )


# -- responses


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
    anchor_result = structured("anchor_result")


class WithdrawalResultSerializer(_RecordResult):
    withdrawal_id = serializers.UUIDField()
    reason = serializers.CharField()
    authority_ref = serializers.CharField()
    scope = serializers.CharField()
    decision_ref = serializers.CharField(allow_blank=True, allow_null=True)


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
    """The revisions, oldest first; a disposed link answers its tombstone instead
    (grounding_id, revision, record_state "disposed", dimension, receipt_ref, …)."""

    grounding_id = serializers.UUIDField()
    revision = serializers.IntegerField()
    results = RevisionEntrySerializer(many=True, required=False)
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


class ProjectionResultSerializer(serializers.Serializer):
    """Native: `fields`. Export formats (web-annotation, prov-o) replace `fields` by the
    format's document; a disposed link projects as its tombstone (LinkSerializer)."""

    grounding_id = serializers.UUIDField()
    revision = serializers.IntegerField()
    display_state = serializers.ChoiceField(choices=DisplayState.choices, required=False)
    decision_ref = serializers.CharField(required=False)
    decision_refs = serializers.ListField(child=serializers.CharField(), required=False)
    recipient = serializers.CharField(required=False)
    purpose = serializers.CharField(required=False)
    format = serializers.ChoiceField(choices=ProjectionFormat.choices, required=False)
    mapping_profile_ref = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    fields = ProjectedFieldsSerializer(required=False, help_text="native: the link as disclosed.")
    withheld = serializers.ListField(
        child=serializers.ChoiceField(DisclosableField.choices), required=False
    )
    loss_report = structured("loss_report", required=False)
    projection_ref = serializers.CharField(required=False)
    projection_revision = serializers.IntegerField(required=False)
    sha256 = serializers.CharField(required=False)


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
