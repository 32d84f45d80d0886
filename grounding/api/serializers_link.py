"""The link as read (API.md "The link as read"): one serializer per group, as
`grounding.representation.link_document` builds it and `grounding.reader` cuts it.

Documentation only: the reader renders the link, and answers embed its document
through `LinkDocumentField`, unchanged. A group, or a member of one, that the
reader's disclosure decisions do not cover is absent and named in `withheld`,
so disclosable members are not required; a disposed link reads as its tombstone
(grounding_id, revision, record_state "disposed", dimension, receipt_ref, policy_ref,
observed_at, disposed_at), so only those four members are always there.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from evidence.choices import AccessLabel
from grounding.choices import (
    DisplayState,
    MembershipRole,
    RebindRequirement,
    RecheckState,
    RecordState,
    ResolutionState,
    ReviewerKind,
    SupportKind,
    UseBasis,
    Verdict,
)
from grounding.values.fields import structured
from policies.choices import DisclosableField


def _ref(**kwargs) -> serializers.CharField:
    return serializers.CharField(allow_blank=True, allow_null=True, **kwargs)


def _instant(**kwargs) -> serializers.DateTimeField:
    return serializers.DateTimeField(allow_null=True, **kwargs)


class StatementReadSerializer(serializers.Serializer):
    binding_id = serializers.UUIDField()
    bound_in_revision = serializers.IntegerField()
    statement_ref = serializers.CharField()
    answer_revision_ref = serializers.CharField()
    answer_revision_provisional = serializers.BooleanField()
    answer_selector = structured("selector")
    answer_representation = structured("answer_representation")
    claim_scope = structured("claim_scope")
    finalization_binding = _ref()
    rebind_requirement = serializers.ChoiceField(choices=RebindRequirement.choices)


class PassageReadSerializer(serializers.Serializer):
    """locator, canonical_url, source_revision_binding, retrieval_observation_ref
    (passage.locator), title (passage.title), excerpt and representation_check
    (passage.excerpt) are disclosable."""

    binding_id = serializers.UUIDField()
    bound_in_revision = serializers.IntegerField()
    passage_id = serializers.UUIDField(allow_null=True)
    passage_ref = _ref()
    source_revision_binding = structured("source_revision_binding", allow_null=True, required=False)
    retrieval_observation_ref = _ref(required=False)
    representation_check = structured("representation_check", allow_null=True, required=False)
    resolution_state = serializers.ChoiceField(choices=ResolutionState.choices)
    access_label = serializers.ChoiceField(choices=AccessLabel.choices, allow_null=True)
    locator = _ref(required=False)
    canonical_url = _ref(required=False)
    title = _ref(required=False)
    excerpt = _ref(required=False, help_text="The literal passage text.")


class AnchorReadSerializer(serializers.Serializer):
    """source_selector and context_ref are disclosable (anchor.selector)."""

    source_selector = structured("selector", required=False)
    selector_profile = serializers.CharField()
    context_ref = _ref(required=False)
    transformation_ref = _ref()
    anchor_result = structured(
        "anchor_result",
        allow_null=True,
        required=False,
        help_text="null until an anchor observation; absent when anchor.selector or "
        "passage.excerpt is withheld.",
    )


class SupportReadSerializer(serializers.Serializer):
    support_kind = serializers.ChoiceField(choices=SupportKind.choices)
    support_scope = structured("support_scope")
    support_limits = structured("support_limits", allow_null=True)
    support_verdict_ref = _ref()
    use_basis = serializers.ChoiceField(choices=UseBasis.choices)
    generation_evidence_ref = _ref()


class AssessmentReadSerializer(serializers.Serializer):
    """verdict (assessments.verdict), reviewer_ref and reviewer_kind
    (assessments.reviewer) are disclosable."""

    assessment_ref = serializers.CharField()
    reviewer_ref = serializers.CharField(required=False)
    reviewer_kind = serializers.ChoiceField(choices=ReviewerKind.choices, required=False)
    authority_ref = _ref()
    method_ref = serializers.CharField()
    verdict = serializers.ChoiceField(choices=Verdict.choices, required=False)
    assessed_inputs = structured("assessed_inputs")
    grounding_revision = serializers.IntegerField()
    recorded_revision = serializers.IntegerField()
    current = serializers.BooleanField(help_text="Made against the link's current basis.")
    rationale_ref = _ref()
    competing_assessment_refs = serializers.ListField(child=serializers.CharField())
    selection_basis_ref = _ref()
    assessed_at = _instant()
    metric_binding = structured("metric_binding", allow_null=True)
    coverage_population = structured("coverage_population", allow_null=True)
    uncertainty_binding = structured("uncertainty_binding", allow_null=True)
    structural_report_ref = _ref()


class MembershipReadSerializer(serializers.Serializer):
    evidence_set_ref = serializers.CharField()
    membership_role = serializers.ChoiceField(choices=MembershipRole.choices)
    added_in_set_revision = serializers.IntegerField()


class TimeReadSerializer(serializers.Serializer):
    asserted_at = _instant()
    observed_at = _instant()
    applicability_interval = structured("applicability_interval", allow_null=True)
    statement_time_ref = _ref()
    review_due = _instant()
    time_uncertainty = structured("time_uncertainty", allow_null=True)


class ContinuityReadSerializer(serializers.Serializer):
    change_ref = _ref()
    predecessor_ref = _ref()
    revision_reason = _ref()
    disposition_policy_ref = _ref()
    disposition_receipt_ref = _ref()


class DisclosureReadSerializer(serializers.Serializer):
    disclosure_policy_ref = _ref()
    recipient_scope = structured("recipient_scope", allow_null=True)
    redaction_profile = _ref()
    rights_ref = _ref()
    safety_policy_ref = _ref()


class ProjectionBindingReadSerializer(serializers.Serializer):
    mapping_profile_ref = _ref()
    endpoint_role_map = structured("endpoint_role_map", allow_null=True)


class WithdrawalReadSerializer(serializers.Serializer):
    reason = serializers.CharField()
    authority_ref = serializers.CharField()
    scope = _ref()
    decision_ref = _ref()
    withdrawn_at = _instant()
    grounding_revision = serializers.IntegerField()


class LinkSerializer(serializers.Serializer):
    """The link as read (API.md). Groups a decision does not cover are absent and
    named in `withheld`; a disposed link is its tombstone."""

    grounding_id = serializers.UUIDField()
    revision = serializers.IntegerField()
    master_ref = _ref(required=False)
    record_state = serializers.ChoiceField(choices=RecordState.choices)
    recheck_state = serializers.ChoiceField(choices=RecheckState.choices, required=False)
    display_state = serializers.ChoiceField(choices=DisplayState.choices, required=False)
    displayed_verdict = serializers.ChoiceField(
        choices=Verdict.choices,
        required=False,
        help_text="When display_state is visible: the selected current assessment's verdict.",
    )
    dimension = serializers.CharField()
    profile = serializers.CharField(required=False, help_text="name@version")
    owner_ref = serializers.CharField(required=False)
    related_link_refs = structured("related_link_refs", allow_null=True, required=False)
    identity_decision = _ref(required=False)
    statement = StatementReadSerializer(required=False)
    passage = PassageReadSerializer(required=False)
    anchor = AnchorReadSerializer(required=False)
    support = SupportReadSerializer(required=False)
    assessments = AssessmentReadSerializer(many=True, required=False)
    evidence_sets = MembershipReadSerializer(many=True, required=False)
    time = TimeReadSerializer(required=False)
    continuity = ContinuityReadSerializer(required=False)
    disclosure = DisclosureReadSerializer(required=False)
    projection = ProjectionBindingReadSerializer(required=False)
    withdrawal = WithdrawalReadSerializer(allow_null=True, required=False)
    withheld = serializers.ListField(
        child=serializers.ChoiceField(DisclosableField.choices), required=False
    )
    # A disposed link's tombstone.
    receipt_ref = serializers.CharField(required=False, help_text="Tombstone: the receipt.")
    policy_ref = serializers.CharField(required=False, help_text="Tombstone: the policy.")
    observed_at = _instant(required=False, help_text="Tombstone only.")
    disposed_at = _instant(required=False, help_text="Tombstone only.")


class ProjectedFieldsSerializer(LinkSerializer):
    """A native projection's `fields`: the link as disclosed to the recipient, without
    the members the projection states itself (grounding_id, revision, display_state)."""

    grounding_id = None
    revision = None
    display_state = None
    withheld = None


@extend_schema_field(LinkSerializer)
class LinkDocumentField(serializers.JSONField):
    """A link document as the reader built it (`grounding.reader`), rendered unchanged:
    what of a link is shown is the reader's decision, never a serializer's."""
