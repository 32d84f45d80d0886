"""What the link change page explains about review: every assessment and where it
stands, why the link displays as it does, and the change notifications that sent it
back to review.

Everything here is computed from the reader's document (`policies.reader`), never
from model fields: a withheld verdict or reviewer stays "withheld", and the display
rule is re-run only over verdicts the reader may see (`grounding.display`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.http import HttpRequest
from django.urls import reverse

from grounding.admin.changes import SUBJECT_GROUPS
from grounding.choices import DisplayState, RecheckState
from grounding.display import AssessmentFacts, derive_display
from grounding.models import ChangeNotificationLink, GroundingLink
from grounding.services.changes import NOTIFYING_ROLES
from policies.choices import DisclosableField as F
from policies.reader import reader_for

WITHHELD = "withheld"


@dataclass
class AssessmentRow:
    assessment_ref: str
    reviewer: str
    verdict: str
    verdict_withheld: bool
    method_ref: str
    authority_ref: str
    selection_basis_ref: str
    made_at_revision: int
    current: bool
    counts: bool  # authorized and current: the display rule weighs it
    selected: bool = False
    competing: bool = False
    standing: str = ""


@dataclass
class DisplayExplanation:
    display_state: str
    reason: str
    rows: list[AssessmentRow] = field(default_factory=list)
    selected_ref: str = ""
    competing_refs: tuple[str, ...] = ()


def _row(a: dict[str, Any]) -> AssessmentRow:
    reviewer = f"{a['reviewer_ref']} ({a['reviewer_kind']})" if "reviewer_ref" in a else WITHHELD
    authorized = bool(a.get("authority_ref"))
    return AssessmentRow(
        assessment_ref=a["assessment_ref"],
        reviewer=reviewer,
        verdict=a.get("verdict", WITHHELD),
        verdict_withheld="verdict" not in a,
        method_ref=a.get("method_ref") or "",
        authority_ref=a.get("authority_ref") or "",
        selection_basis_ref=a.get("selection_basis_ref") or "",
        made_at_revision=a.get("grounding_revision"),
        current=bool(a.get("current")),
        counts=authorized and bool(a.get("current")),
    )


def _standing(row: AssessmentRow) -> str:
    if not row.current:
        return "stale: made before the statement, passage, anchor or support changed"
    if not row.authority_ref:
        return "not weighed: no authority_ref"
    if row.selected:
        if row.selection_basis_ref:
            return f"selected by policy ({row.selection_basis_ref})"
        return "selected: the latest of the agreeing current assessments"
    if row.competing:
        return "competing: a current assessment with another verdict"
    return "weighed: current and authorized"


def explain_display(document: dict[str, Any]) -> DisplayExplanation:
    """Why the link's display_state is what it is, from the reader's document."""
    state = document["display_state"]
    rows = [_row(a) for a in document.get("assessments", [])]
    verdicts_visible = F.ASSESSMENTS_VERDICT not in document["withheld"]
    explanation = DisplayExplanation(state, "", rows)
    if verdicts_visible:
        passage = document.get("passage", {})
        display = derive_display(
            record_state=document["record_state"],
            recheck_state=document["recheck_state"],
            resolution_state=passage.get("resolution_state", ""),
            source_restricted=passage.get("access_label") == "restricted",
            assessments=[
                AssessmentFacts(
                    assessment_ref=r.assessment_ref,
                    verdict=r.verdict,
                    authorized=bool(r.authority_ref),
                    current=r.current,
                    selection_basis_ref=r.selection_basis_ref,
                )
                for r in rows
            ],
        )
        explanation.selected_ref = display.selected_assessment_ref
        explanation.competing_refs = display.competing_assessment_refs
        for row in rows:
            row.selected = row.assessment_ref == display.selected_assessment_ref
            row.competing = (
                row.assessment_ref in display.competing_assessment_refs and not row.selected
            )
    for row in rows:
        row.standing = _standing(row)
    explanation.reason = _reason(document, rows, explanation, verdicts_visible)
    return explanation


def _reason(
    document: dict[str, Any],
    rows: list[AssessmentRow],
    explanation: DisplayExplanation,
    verdicts_visible: bool,
) -> str:
    state = explanation.display_state
    weighed = [r for r in rows if r.counts]
    if state == DisplayState.WITHDRAWN:
        return "Withdrawn: a withdrawn link is never displayed as support."
    if state == DisplayState.RESTRICTED:
        return "Restricted: the source is restricted, so the link is never shown as visible."
    if state == DisplayState.UNAVAILABLE:
        resolution = document.get("passage", {}).get("resolution_state", "")
        return f"Unavailable: the anchor resolution is {resolution}."
    if state == DisplayState.UNASSESSED:
        recheck = document["recheck_state"]
        if recheck in (RecheckState.STALE, RecheckState.PENDING_REVIEW):
            return (
                f"Unassessed: the recheck state is {recheck}, and a link awaiting review "
                "is not shown as positive until a fresh assessment is bound."
            )
        if not rows:
            return "Unassessed: no assessment is bound."
        return (
            "Unassessed: no bound assessment is both current (made at or after the "
            "link's last change of basis) and authorized (it carries an authority_ref)."
        )
    if state == DisplayState.DISPUTED:
        if not verdicts_visible:
            return (
                f"Disputed: {len(weighed)} current, authorized assessments disagree and none "
                "carries a selection_basis_ref (their verdicts are withheld from you)."
            )
        verdicts = sorted({r.verdict for r in weighed})
        return (
            f"Disputed: {len(weighed)} current, authorized assessments disagree "
            f"({', '.join(verdicts)}) and none carries a selection_basis_ref that picks one."
        )
    if state == DisplayState.VISIBLE:
        if not verdicts_visible:
            return "Visible: one current, authorized assessment is selected (verdict withheld)."
        chosen = next((r for r in rows if r.selected), None)
        if chosen is None:
            return "Visible."
        how = (
            f"its selection_basis_ref {chosen.selection_basis_ref} picks it"
            if chosen.selection_basis_ref
            else "every current, authorized assessment agrees"
        )
        return f"Visible as {chosen.verdict}: {chosen.assessment_ref} is selected because {how}."
    return f"Display state {state}."


def notifications_for(request: HttpRequest, link: GroundingLink, document: dict) -> list[dict]:
    """The change notifications that gave this link a revision, newest first, with
    the one its change_ref names (the one that sent it to review now) flagged.
    Notifications are Dimension records, not link content: the reader's Dimension
    roles decide (as in the notification admin)."""
    reader = reader_for(request)
    if not reader.roles(link.dimension_id):
        return []
    current_ref = document.get("continuity", {}).get("change_ref") or ""
    # A subject is a value of the link it changed: a source change's is the passage's
    # address, an answer change's the statement's answer revision. Shown beside this
    # link only when the reader may see that group of it.
    hidden = {kind: group in document["withheld"] for kind, group in SUBJECT_GROUPS.items()}
    # The notification's own page is for the roles that read notifications (as in the API).
    linked = bool(reader.roles(link.dimension_id) & {str(r) for r in NOTIFYING_ROLES})
    rows = (
        ChangeNotificationLink.objects.filter(link_id=link.pk)
        .select_related("notification")
        .order_by("-revision")
    )
    out = []
    for row in rows:
        n = row.notification
        out.append(
            {
                "change_ref": n.change_ref,
                "kind": n.kind,
                "subject_ref": WITHHELD if hidden.get(n.kind) else n.subject_ref,
                "reason": n.reason,
                "observed_at": n.observed_at,
                "recorded_at": n.recorded_at,
                "revision": row.revision,
                "current": n.change_ref == current_ref,
                "url": reverse("admin:grounding_changenotification_change", args=[n.pk])
                if linked
                else None,
            }
        )
    return out
