"""record_anchor_observation: attach an outside (or the builtin) resolver's
observation. Never retargets a selector and never changes support."""

from __future__ import annotations

import hashlib
from typing import Any

from common.kernel.refusals import Offender, Refusal
from evidence import anchoring as resolver
from evidence.offsets import nfc
from grounding import bodies
from grounding.choices import AnchorStatus, ResolutionState
from grounding.models import AnchorObservation, GroundingLink
from grounding.services._common import (
    OPEN_LINK_REFUSALS,
    open_link,
    refresh_display,
    refusal_context,
    refuse_invalid,
    save_revision,
)
from grounding.values import structured
from policies import audit
from policies.actions import composable
from policies.choices import Role
from policies.operations import Operation

# Zero matches leave the state unknown unless the resolver says why.
_REASONED_STATES = {
    ResolutionState.STALE,
    ResolutionState.UNAVAILABLE,
    ResolutionState.RESTRICTED,
}


@composable
def do_record_anchor_observation(
    *,
    actor,
    grounding_id,
    expected_revision: int,
    observation: dict[str, Any] | None = None,
    use_builtin_resolver: bool = False,
    reason: str = "",
) -> AnchorObservation:
    link = open_link(
        grounding_id,
        actor=actor,
        roles=RECORD_ANCHOR_OBSERVATION.roles,
        expected_revision=expected_revision,
        allow_retired=True,
    )

    binding = link.current_passage
    if use_builtin_resolver:
        anchor_result = _run_builtin(link)
    else:
        anchor_result = _check_supplied(link, observation)
    status = anchor_result["status"]
    if status == AnchorStatus.RESOLVED:
        state = ResolutionState.RESOLVED
    elif status == AnchorStatus.AMBIGUOUS:
        state = ResolutionState.AMBIGUOUS
    else:
        reported = anchor_result.get("reason")
        state = reported if reported in _REASONED_STATES else ResolutionState.UNKNOWN

    record = AnchorObservation.objects.create(
        link=link,
        passage_binding=binding,
        grounding_revision=link.revision,
        recorded_revision=link.revision + 1,
        recorded_by=actor,
        resolver_ref=anchor_result["resolver_ref"],
        anchor_result=anchor_result,
        resolution_state=state,
    )
    link.current_anchor_observation = record
    link.resolution_state = state
    refresh_display(link)
    save_revision(
        link, actor=actor, reason=reason or f"anchor observation by {record.resolver_ref}"
    )
    audit.record(
        actor=actor,
        action="record_anchor_observation",
        grounding_id=link.grounding_id,
        dimension=link.dimension,
        expected_revision=expected_revision,
        resulting_revision=link.revision,
        references={"resolver_ref": record.resolver_ref, "observation_id": str(record.pk)},
    )
    return record


RECORD_ANCHOR_OBSERVATION = Operation(
    "record_anchor_observation",
    body=do_record_anchor_observation,
    input=bodies.AnchorObservationSerializer,
    output="grounding.api.serializers.AnchorObservationResultSerializer",
    roles=(Role.CURATOR, Role.REVIEWER),
    refusals=(*OPEN_LINK_REFUSALS, "anchor_input_mismatch", "anchor_text_unavailable"),
    success=(201,),
    headers=("ETag",),
    conditional=True,
    summary="Record an anchor observation (the builtin resolver, or a supplied one)",
    context=refusal_context,
)
record_anchor_observation = RECORD_ANCHOR_OBSERVATION.entry


def _run_builtin(link: GroundingLink) -> dict[str, Any]:
    passage = link.current_passage.passage
    if passage is None or passage.content_id is None:
        raise Refusal(
            "anchor_text_unavailable",
            "the builtin resolver needs an imported evidence passage with local text.",
        )
    resolution = resolver.resolve(link.current_passage.source_selector, passage.content.text)
    return resolution.as_anchor_result(resolver_ref=resolver.RESOLVER_REF)


def _check_supplied(link: GroundingLink, observation: Any) -> dict[str, Any]:
    if not isinstance(observation, dict):
        refuse_invalid([Offender("", "type", "the observation must be an object.")])
    # Shape, status ↔ match_count agreement and match ranges are schema rules.
    refuse_invalid(structured.validate("anchor_result", observation, pointer=""))
    passage = link.current_passage.passage
    if passage is not None and passage.content_id is not None:
        # The observation must be about the representation this link binds.
        digest = hashlib.sha256(nfc(passage.content.text).encode("utf-8")).hexdigest()
        if observation["text_sha256"] != digest:
            raise Refusal(
                "anchor_input_mismatch",
                "the observation was made on a different representation of the passage.",
            )
    return dict(observation)
