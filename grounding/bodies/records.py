"""The bodies of the append-only records a link gets (grounding.models.records): an
assessment, an anchor observation, a withdrawal, a disposal. Each is made against
the link's current revision, so each body may name the revision it expects
(`ExpectedRevision`, instead of If-Match).
"""

from __future__ import annotations

import copy
from typing import Any

from rest_framework import serializers

from common.kernel.fields import described_as, one_of
from grounding.bodies.fields import (
    EXPECTED_REVISION,
    ExpectedRevision,
    opt,
    opt_instant,
    opt_ref,
    ref,
)
from grounding.choices import ReviewerKind, Verdict
from grounding.values.fields import openapi_schema, structured


class AssessmentSerializer(serializers.Serializer):
    expected_revision = ExpectedRevision()
    assessment_ref = ref()
    reviewer_ref = ref()
    reviewer_kind = serializers.ChoiceField(choices=ReviewerKind.choices)
    authority_ref = opt_ref()
    method_ref = ref()
    verdict = serializers.ChoiceField(choices=Verdict.choices)
    assessed_inputs = structured(
        "assessed_inputs",
        help_text="grounding_revision must be the link's current revision (else 409 "
        "assessment_input_mismatch).",
    )
    assessed_at = opt_instant()
    rationale_ref = opt_ref()
    selection_basis_ref = opt_ref()
    metric_binding = opt("metric_binding")
    coverage_population = opt("coverage_population")
    uncertainty_binding = opt("uncertainty_binding")
    structural_report_ref = opt_ref()


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
    reason = ref()
    authority_ref = ref()
    scope = opt_ref()
    decision_ref = opt_ref()


class DisposalSerializer(serializers.Serializer):
    expected_revision = ExpectedRevision()
    receipt_ref = ref()
    policy_ref = ref()
