"""bind_assessment: attach a supplied judgment whose assessed inputs match the
current revision. Never computes entailment, never overwrites a competitor."""

from __future__ import annotations

from typing import Any

from common.kernel.refusals import Offender, Refusal
from grounding import bodies
from grounding.choices import DisplayState, RecheckState
from grounding.models import Assessment
from grounding.services import inputs
from grounding.services._common import (
    OPEN_LINK_REFUSALS,
    open_link,
    refresh_display,
    refusal_context,
    refuse_invalid,
    save_revision,
)
from grounding.values.timestamps import parse_rfc3339
from policies import audit
from policies.actions import composable
from policies.choices import Role
from policies.operations import Operation


@composable
def do_bind_assessment(
    *, actor, grounding_id, expected_revision: int, assessment: dict[str, Any]
) -> Assessment:
    link = open_link(
        grounding_id, actor=actor, roles=BIND_ASSESSMENT.roles, expected_revision=expected_revision
    )

    offenders = inputs.validate_group(
        inputs.of(BIND_ASSESSMENT), assessment, profile=link.profile, pointer=""
    )
    refuse_invalid(offenders)

    assessed = assessment["assessed_inputs"]
    mismatches = _input_mismatches(link, assessed)
    if mismatches:
        raise Refusal(
            "assessment_input_mismatch",
            "the assessment was made on inputs that are not the link's current ones.",
            offenders=mismatches,
            extra={"current_revision": link.revision},
        )
    if link.assessments.filter(assessment_ref=assessment["assessment_ref"]).exists():
        raise Refusal(
            "assessment_duplicate",
            "an assessment with this assessment_ref is already bound to the link.",
        )

    current = [a for a in link.assessments.all() if a.grounding_revision >= link.basis_revision]
    competing = sorted(a.assessment_ref for a in current if a.verdict != assessment["verdict"])
    record = Assessment.objects.create(
        link=link,
        grounding_revision=link.revision,
        recorded_revision=link.revision + 1,
        recorded_by=actor,
        assessment_ref=assessment["assessment_ref"],
        reviewer_ref=assessment["reviewer_ref"],
        reviewer_kind=assessment["reviewer_kind"],
        authority_ref=assessment.get("authority_ref") or "",
        method_ref=assessment["method_ref"],
        verdict=assessment["verdict"],
        assessed_input_refs=assessed,
        statement_binding=link.current_statement,
        passage_binding=link.current_passage,
        rationale_ref=assessment.get("rationale_ref") or "",
        competing_assessment_refs=competing,
        selection_basis_ref=assessment.get("selection_basis_ref") or "",
        assessed_at=parse_rfc3339(assessment["assessed_at"])
        if assessment.get("assessed_at")
        else None,
        metric_binding=assessment.get("metric_binding"),
        coverage_population=assessment.get("coverage_population"),
        uncertainty_binding=assessment.get("uncertainty_binding"),
        structural_report_ref=assessment.get("structural_report_ref") or "",
    )
    # A fresh, input-matched assessment answers a stale or pending recheck; whether it
    # is shown is still the display rule's decision.
    link.recheck_state = RecheckState.CURRENT
    refresh_display(link)
    if link.display_state == DisplayState.DISPUTED:
        link.recheck_state = RecheckState.DISPUTED
    save_revision(link, actor=actor, reason=f"assessment {record.assessment_ref} bound")
    audit.record(
        actor=actor,
        action=BIND_ASSESSMENT.action,
        grounding_id=link.grounding_id,
        dimension=link.dimension,
        expected_revision=expected_revision,
        resulting_revision=link.revision,
        decision_ref=record.authority_ref,
        references={"assessment_ref": record.assessment_ref, "verdict": record.verdict},
    )
    return record


BIND_ASSESSMENT = Operation(
    "bind_assessment",
    body=do_bind_assessment,
    input=bodies.AssessmentSerializer,
    output="grounding.api.serializers.AssessmentResultSerializer",
    roles=(Role.REVIEWER,),
    refusals=(*OPEN_LINK_REFUSALS, "assessment_input_mismatch", "assessment_duplicate"),
    success=(201,),
    headers=("ETag",),
    conditional=True,
    summary="Bind a supplied assessment to the link's current revision",
    context=refusal_context,
)
bind_assessment = BIND_ASSESSMENT.entry


def _input_mismatches(link, assessed: dict[str, Any]) -> list[Offender]:
    offenders = []
    if assessed.get("grounding_revision") != link.revision:
        offenders.append(
            Offender(
                "/assessed_inputs/grounding_revision",
                "assessment_input_mismatch",
                f"the link is at revision {link.revision}.",
            )
        )
    for key, current in (
        ("statement_binding", link.current_statement_id),
        ("passage_binding", link.current_passage_id),
    ):
        if assessed.get(key) is not None and str(assessed[key]) != str(current):
            offenders.append(
                Offender(
                    f"/assessed_inputs/{key}",
                    "assessment_input_mismatch",
                    f"{key} is not the link's current binding.",
                )
            )
    return offenders
