"""The request bodies of grounding's operations, declared once.

Each body is a serializer class: drf-spectacular documents it (OpenAPI) and
`grounding.services.inputs` compiles it, once, into the checks the services run on
every caller's input, over HTTP or not (admin, citations, commands, seed_demo), with
every offender located by a JSON pointer. So what a field declares (required, a
reference of ≤512 characters, a choice, a structured value, a date-time) is what is
enforced, and the description cannot drift from the server. DRF's `is_valid()` is
not used: nested, it costs more per registered link than bulk registration can
afford.

Bodies and their groups are closed: the services refuse a member they do not know
(400 unknown_field), and `common.web.openapi.close_request_bodies` says so. An
optional member may be null (the same as leaving it out).
"""

from __future__ import annotations

import copy
from typing import Any

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from common.kernel.fields import RuledCharField, described_as, one_of
from common.kernel.text import PATH_SEGMENT_REF
from grounding.choices import (
    CITATION_FORMATS,
    OFFSET_UNITS,
    ChangeKind,
    MembershipRole,
    RebindRequirement,
    RecheckState,
    RecordState,
    ReviewerKind,
    SupportKind,
    UseBasis,
    Verdict,
)
from grounding.values.fields import openapi_schema, structured
from policies.models import PROFILE_REF

EXPECTED_REVISION = (
    "The revision you expect, instead of If-Match (for clients that cannot set headers)."
)
REF_LENGTH = 512  # every reference fits 512 characters
OWNER_REF_LENGTH = 255  # GroundingLink.owner_ref
# answer_revision_ref + "#cp=<start>-<end>" must fit a 512-character ref.
MAX_ANSWER_REF = 460
# Items one bulk registration takes (API.md "Tenancy"): one request is one bounded
# transaction; a larger batch is split by the client.
BULK_MAX_ITEMS = 1000


def _ref(**kwargs: Any) -> serializers.CharField:
    """A reference: a non-empty string (not only spaces) of ≤512 characters."""
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


class ExpectedRevision(serializers.IntegerField):
    """The body's alternative to If-Match. `grounding.api.conditional` takes it out of
    the body before any service sees it: it is no member of the operation's input."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            min_value=1,
            max_value=999_999_999,
            required=False,
            help_text=EXPECTED_REVISION,
            **kwargs,
        )


# -- the groups of a link


class StatementSerializer(serializers.Serializer):
    statement_ref = _ref()
    answer_revision_ref = _ref()
    answer_revision_provisional = serializers.BooleanField(required=False, allow_null=True)
    answer_selector = structured("selector", help_text="W3C selector into the answer text.")
    answer_representation = structured("answer_representation")
    claim_scope = structured("claim_scope")
    finalization_binding = _opt_ref()
    rebind_requirement = _opt_choice(RebindRequirement.choices)


class PassageByIdSerializer(serializers.Serializer):
    """An imported evidence passage: its id; the rest is taken from the passage (any
    other member is 400 derived_field)."""

    passage_id = serializers.UUIDField(help_text="An imported evidence passage.")
    retrieval_observation_ref = _opt_ref()


class ExternalPassageSerializer(serializers.Serializer):
    """An external passage: its ref and source revision binding (no passage_id)."""

    passage_ref = _ref(help_text="An external passage.")
    source_revision_binding = structured("source_revision_binding")
    retrieval_observation_ref = _opt_ref()
    representation_check = _opt("representation_check")


@one_of(PassageByIdSerializer, ExternalPassageSerializer)
class PassageSerializer(serializers.Serializer):
    """An imported evidence passage ({"passage_id"}) or an external binding
    ({"passage_ref", "source_revision_binding", …}): checked as one group (its members
    all optional here), described as exactly one of the two shapes."""

    passage_id = serializers.UUIDField(
        required=False, allow_null=True, help_text="An imported evidence passage."
    )
    passage_ref = _ref(
        required=False, allow_null=True, help_text="An external passage (instead of passage_id)."
    )
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


# -- link operations


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
    related_link_refs = _opt("related_link_refs")
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
    related_link_refs = _opt("related_link_refs")
    identity_decision = serializers.CharField(required=False, allow_blank=True)
    disclosure = _partial(DisclosureSerializer)(required=False)


class AssessmentSerializer(serializers.Serializer):
    expected_revision = ExpectedRevision()
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


class BuiltinResolverSerializer(serializers.Serializer):
    """Run the reference resolver here: {"resolver": "builtin", "reason"?}."""

    expected_revision = ExpectedRevision()
    resolver = serializers.ChoiceField(choices=["builtin"], help_text="Run it here.")
    reason = serializers.CharField(required=False)


def _supplied_observation() -> dict[str, Any]:
    """The shipped anchor_result schema (its conditionals included), and the body's
    expected_revision."""
    schema = copy.deepcopy(openapi_schema("anchor_result"))
    schema["properties"]["expected_revision"] = {
        "type": "integer", "minimum": 1, "maximum": 999_999_999,
        "description": EXPECTED_REVISION,
    }  # fmt: skip
    return schema


@described_as(_supplied_observation)
class SuppliedObservationSerializer(serializers.Serializer):
    """An outside resolver's observation: the anchor_result members."""

    expected_revision = ExpectedRevision()
    status = serializers.ChoiceField(choices=["resolved", "ambiguous", "unresolved"])
    match_count = serializers.IntegerField(min_value=0)
    matches = _MatchSerializer(many=True)
    resolver_ref = serializers.CharField()
    text_sha256 = serializers.RegexField(r"^[0-9a-f]{64}$", required=False)
    reason = serializers.CharField(required=False)


@one_of(BuiltinResolverSerializer, SuppliedObservationSerializer)
class AnchorObservationSerializer(serializers.Serializer):
    """Either {"resolver": "builtin", "reason"?}: the reference resolver runs here, or a
    supplied observation (the anchor_result members: status, match_count, matches,
    resolver_ref, text_sha256, reason), which the service validates with the shipped
    anchor_result schema."""

    expected_revision = ExpectedRevision()
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


# The members of a builtin-resolver request (the others describe a supplied observation).
BUILTIN_RESOLVER_MEMBERS = ("resolver", "reason")


class WithdrawalSerializer(serializers.Serializer):
    expected_revision = ExpectedRevision()
    reason = _ref()
    authority_ref = _ref()
    scope = _opt_ref()
    decision_ref = _opt_ref()


class DisposalSerializer(serializers.Serializer):
    expected_revision = ExpectedRevision()
    receipt_ref = _ref()
    policy_ref = _ref()


# -- evidence sets


class MemberSerializer(serializers.Serializer):
    grounding_id = serializers.UUIDField()
    membership_role = serializers.ChoiceField(choices=MembershipRole.choices)


class EvidenceSetCreateSerializer(serializers.Serializer):
    # A path segment of the set's URL (control_offenders).
    evidence_set_ref = RuledCharField(rule=PATH_SEGMENT_REF, max_length=REF_LENGTH)
    dimension = _ref()
    members = MemberSerializer(many=True, required=False)
    combination_rule_ref = _opt_ref()
    dependence_ref = _opt_ref()
    declared_missing_members = serializers.ListField(child=serializers.CharField(), required=False)


class MemberAddSerializer(MemberSerializer):
    expected_revision = ExpectedRevision()


# -- change notifications and citations


# A change_ref (and any subject_ref): no white space, control character, U+0000 or
# lone surrogate (grounding.services.change_rules._REF and storable()).
CHANGE_REF = "^[^\\s\\u0085\\u0000-\\u001F\\u007F]+$"


# Named in the description as the other bodies are (drf-spectacular appends "Request"
# to a request component: the class name's own "Request" was said twice).
@extend_schema_serializer(component_name="ChangeNotificationCreate")
class ChangeNotificationRequestSerializer(serializers.Serializer):
    dimension = serializers.CharField()
    # grounding.services.change_rules checks both (offenders `format`, `subject_shape`).
    change_ref = RuledCharField(rule=CHANGE_REF, max_length=512)
    kind = serializers.ChoiceField(
        choices=[ChangeKind.SOURCE, ChangeKind.ANSWER, ChangeKind.POLICY, ChangeKind.ASSESSMENT]
    )
    subject_ref = RuledCharField(
        rule=CHANGE_REF,
        max_length=2048,
        help_text="A source's: a canonical URL (http(s) with a host, ≤2,048 characters) or "
        "a passage ref; any other kind's: a ref of ≤512 characters. No white space.",
    )
    observed_at = serializers.DateTimeField()
    reason = serializers.CharField(max_length=4000)  # grounding.services.change_rules


def _opt_str(**kwargs: Any) -> serializers.CharField:
    return serializers.CharField(required=False, allow_null=True, **kwargs)


@extend_schema_serializer(component_name="FromCitations")
class FromCitationsRequestSerializer(serializers.Serializer):
    """The payload is the provider's response as returned; the parser of `format`
    reads it."""

    dimension = serializers.CharField(help_text="A Dimension where you are a curator.")
    profile = RuledCharField(rule=PROFILE_REF, help_text="name@version of a published profile.")
    answer_revision_ref = serializers.CharField(max_length=MAX_ANSWER_REF)
    format = serializers.ChoiceField(choices=list(CITATION_FORMATS))
    payload = serializers.DictField(help_text="The provider's response object, as returned.")
    passages = serializers.DictField(
        child=PassageSerializer(),
        help_text="The provider's document key (Anthropic document index, OpenAI url or "
        "file id, Gemini grounding-chunk index as a string, crw citation or source url) "
        "⇒ the passage it stands for.",
    )
    owner_ref = _opt_str(max_length=OWNER_REF_LENGTH)
    # language, media_type: the answer_representation's (grounding.api.openapi_citations
    # states their patterns, grounding.services.citations.service checks them).
    language = _opt_str()
    media_type = _opt_str()
    use_basis = serializers.ChoiceField(
        choices=UseBasis.choices, required=False, allow_null=True, help_text="Default unknown."
    )
    generation_evidence_ref = _opt_str()
    asserted_at = serializers.DateTimeField(required=False, allow_null=True)
    offset_unit = serializers.ChoiceField(
        choices=list(OFFSET_UNITS), required=False, allow_null=True
    )
