"""The one pure function that derives what a link may display.

Inputs are plain values so the rule can be tested exhaustively (property tests)
and reused by every path that needs it: services store the result on the link,
reads of past revisions recompute it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from grounding.choices import DisplayState, RecheckState, RecordState, ResolutionState


@dataclass(frozen=True)
class AssessmentFacts:
    assessment_ref: str
    verdict: str
    # Supplied under a recorded authority (authority_ref) by a reviewer.
    authorized: bool
    # Made against the link's current basis (no endpoint/support change since).
    current: bool
    selection_basis_ref: str = ""


@dataclass(frozen=True)
class Display:
    display_state: str
    displayed_verdict: str = ""
    selected_assessment_ref: str = ""
    competing_assessment_refs: tuple[str, ...] = ()


_NOT_POSITIVE_RECHECK = {RecheckState.STALE, RecheckState.PENDING_REVIEW}


def derive_display(
    *,
    record_state: str,
    recheck_state: str,
    resolution_state: str,
    source_restricted: bool,
    assessments: Sequence[AssessmentFacts],
) -> Display:
    """Absent ⇒ unassessed; stale ⇒ not positive; disagreement without a policy
    selection ⇒ disputed; restricted or unavailable evidence is never visible."""
    if record_state in (RecordState.WITHDRAWN, RecordState.DISPOSED):
        return Display(DisplayState.WITHDRAWN)
    if source_restricted or resolution_state == ResolutionState.RESTRICTED:
        return Display(DisplayState.RESTRICTED)
    if resolution_state in (ResolutionState.UNAVAILABLE, ResolutionState.STALE):
        return Display(DisplayState.UNAVAILABLE)
    if recheck_state in _NOT_POSITIVE_RECHECK:
        return Display(DisplayState.UNASSESSED)
    usable = [a for a in assessments if a.authorized and a.current]
    if not usable:
        return Display(DisplayState.UNASSESSED)
    selected = [a for a in usable if a.selection_basis_ref]
    if selected:
        chosen = selected[-1]
    elif len({a.verdict for a in usable}) == 1:
        chosen = usable[-1]
    else:
        return Display(
            DisplayState.DISPUTED,
            competing_assessment_refs=tuple(a.assessment_ref for a in usable),
        )
    competing = tuple(a.assessment_ref for a in usable if a.verdict != chosen.verdict)
    return Display(
        DisplayState.VISIBLE,
        displayed_verdict=chosen.verdict,
        selected_assessment_ref=chosen.assessment_ref,
        competing_assessment_refs=competing,
    )
