"""A link's own bodies: its groups (statement, passage, anchor, support, time,
disclosure), registering it (one, or a bounded batch) and revising it. They live
together because registration declares the groups whole and revision the same
groups with every member optional (`_partial`): one declaration of each group
serves both.
"""

from __future__ import annotations

from rest_framework import serializers

from common.kernel.fields import RuledCharField, one_of
from grounding.bodies.fields import (
    OWNER_REF_LENGTH,
    REF_LENGTH,
    ExpectedRevision,
    opt,
    opt_choice,
    opt_instant,
    opt_ref,
    ref,
)
from grounding.choices import (
    RebindRequirement,
    RecheckState,
    RecordState,
    SupportKind,
    UseBasis,
)
from grounding.values.fields import structured
from policies.models import PROFILE_REF

# Items one bulk registration takes (API.md "Tenancy"): one request is one bounded
# transaction; a larger batch is split by the client.
BULK_MAX_ITEMS = 1000


# -- the groups of a link


class StatementSerializer(serializers.Serializer):
    statement_ref = ref()
    answer_revision_ref = ref()
    answer_revision_provisional = serializers.BooleanField(required=False, allow_null=True)
    answer_selector = structured("selector", help_text="W3C selector into the answer text.")
    answer_representation = structured("answer_representation")
    claim_scope = structured("claim_scope")
    finalization_binding = opt_ref()
    rebind_requirement = opt_choice(RebindRequirement.choices)


class PassageByIdSerializer(serializers.Serializer):
    """An imported evidence passage: its id; the rest is taken from the passage (any
    other member is 400 derived_field)."""

    passage_id = serializers.UUIDField(help_text="An imported evidence passage.")
    retrieval_observation_ref = opt_ref()


class ExternalPassageSerializer(serializers.Serializer):
    """An external passage: its ref and source revision binding (no passage_id)."""

    passage_ref = ref(help_text="An external passage.")
    source_revision_binding = structured("source_revision_binding")
    retrieval_observation_ref = opt_ref()
    representation_check = opt("representation_check")


@one_of(PassageByIdSerializer, ExternalPassageSerializer)
class PassageSerializer(serializers.Serializer):
    """An imported evidence passage ({"passage_id"}) or an external binding
    ({"passage_ref", "source_revision_binding", …}): checked as one group (its members
    all optional here), described as exactly one of the two shapes."""

    passage_id = serializers.UUIDField(
        required=False, allow_null=True, help_text="An imported evidence passage."
    )
    passage_ref = ref(
        required=False, allow_null=True, help_text="An external passage (instead of passage_id)."
    )
    source_revision_binding = opt("source_revision_binding")
    retrieval_observation_ref = opt_ref()
    representation_check = opt("representation_check")


class AnchorSerializer(serializers.Serializer):
    source_selector = structured(
        "selector", help_text="TextQuoteSelector, TextPositionSelector or a WSP segment ref."
    )
    selector_profile = ref(help_text="One of the profile's selector_profiles.")
    context_ref = opt_ref()
    transformation_ref = opt_ref()


class SupportSerializer(serializers.Serializer):
    support_kind = serializers.ChoiceField(
        choices=SupportKind.choices, help_text="One of the profile's support_vocabulary."
    )
    support_scope = structured("support_scope")
    support_limits = opt("support_limits")
    use_basis = opt_choice(UseBasis.choices)
    generation_evidence_ref = opt_ref()


class TimeSerializer(serializers.Serializer):
    asserted_at = opt_instant()
    applicability_interval = opt("applicability_interval")
    statement_time_ref = opt_ref()
    review_due = opt_instant()
    time_uncertainty = opt("time_uncertainty")


class DisclosureSerializer(serializers.Serializer):
    recipient_scope = opt("recipient_scope")
    redaction_profile = opt_ref()
    rights_ref = opt_ref()


# -- registration and revision


class RegisterSerializer(serializers.Serializer):
    dimension = serializers.CharField(help_text="A Dimension where you are a curator.")
    profile = RuledCharField(rule=PROFILE_REF, help_text="name@version of a published profile.")
    owner_ref = serializers.CharField(max_length=OWNER_REF_LENGTH)
    master_ref = serializers.CharField(
        max_length=REF_LENGTH, required=False, allow_blank=True, allow_null=True
    )
    statement = StatementSerializer()
    passage = PassageSerializer()
    anchor = AnchorSerializer()
    support = SupportSerializer()
    time = TimeSerializer(required=False, allow_null=True)
    related_link_refs = opt("related_link_refs")
    identity_decision = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    disclosure = DisclosureSerializer(required=False, allow_null=True)


class BulkRegisterSerializer(serializers.Serializer):
    items = RegisterSerializer(
        many=True,
        min_length=1,
        max_length=BULK_MAX_ITEMS,
        help_text=f"1 to {BULK_MAX_ITEMS} items, registered all or none; more is "
        "400 validation_error with offender /items max_items.",
    )


def _partial(serializer_class: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """The same group for PATCH: every member optional (the group is merged into the
    link's, so a required member present in it still cannot be emptied)."""
    fields = {}
    for name, field in serializer_class().get_fields().items():
        # A declared field is deep-copied into each instance from its constructor
        # arguments (DRF's Field.__deepcopy__), so an attribute set here would be lost
        # and the schema would still require the member: it goes into the arguments.
        field._kwargs = {**field._kwargs, "required": False}
        field.required = False
        fields[name] = field
    name = serializer_class.__name__.replace("Serializer", "PatchSerializer")
    return type(name, (serializers.Serializer,), fields)


class ReviseSerializer(serializers.Serializer):
    """Any of the groups, merged into the link's (a required member present in a group
    cannot be emptied), and a reason. Replacing statement, passage or anchor members
    makes earlier assessments stale."""

    revision_reason = serializers.CharField()
    expected_revision = ExpectedRevision()
    statement = _partial(StatementSerializer)(required=False)
    passage = _partial(PassageSerializer)(required=False)
    anchor = _partial(AnchorSerializer)(required=False)
    support = _partial(SupportSerializer)(required=False)
    time = _partial(TimeSerializer)(required=False)
    owner_ref = serializers.CharField(max_length=OWNER_REF_LENGTH, required=False)
    # A curator may admit a candidate (or take admission back) and ask for a recheck;
    # withdrawal and disposal have operations of their own.
    record_state = serializers.ChoiceField(
        choices=[RecordState.CANDIDATE.value, RecordState.ADMITTED.value], required=False
    )
    recheck_state = serializers.ChoiceField(
        choices=[RecheckState.PENDING_REVIEW.value], required=False
    )
    change_ref = serializers.CharField(max_length=REF_LENGTH, required=False, allow_blank=True)
    related_link_refs = opt("related_link_refs")
    identity_decision = serializers.CharField(required=False, allow_blank=True)
    disclosure = _partial(DisclosureSerializer)(required=False)
