"""What every grounding operation shares: the refused event's fields, the link
opened with its preconditions in a fixed order, the single revision bump.

Each operation is a body `do_<name>` with its public entry `<name>`
(`policies.actions`: the one write idiom); `refusal_context` is the entries'
`context`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from common.kernel import compat
from common.kernel.refusals import Refusal
from common.kernel.text import plausible_ref
from grounding.choices import RecordState
from grounding.display import AssessmentFacts, derive_display
from grounding.models import Assessment, GroundingLink
from grounding.selectors import NO_SUCH_LINK, dimension_name_of, member_dimension_ids
from policies.actions import refuse_invalid
from policies.choices import Role
from policies.models import Dimension
from policies.services import require_active, require_published, require_role

__all__ = [
    "OPEN_LINK_REFUSALS",
    "assessment_facts",
    "lock_link",
    "open_link",
    "refresh_display",
    "refusal_context",
    "refuse_invalid",
    "require_not_withdrawn",
    "require_revision",
    "save_revision",
    "save_tracked",
]


# What `open_link` refuses, in its order, and a body that fails its checks.
OPEN_LINK_REFUSALS = (
    "not_found",
    "dimension_inactive",
    "role_required",
    "profile_not_published",
    "link_withdrawn",
    "link_disposed",
    "revision_mismatch",
    "validation_error",
)


def refusal_context(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The refused event's fields from an operation's keyword arguments: the link it
    names (and that link's Dimension), or the Dimension a body names, and the
    revision it expected.

    The link's Dimension is looked up among the actor's own, by the same statement
    whether the link is another tenant's or no link at all; `policies.audit.record`
    keeps a named Dimension only where the actor holds a role (API.md "Tenancy").
    """
    actor = kwargs.get("actor")
    grounding_id = kwargs.get("grounding_id")
    dimension = kwargs.get("dimension")
    payload = kwargs.get("payload")
    named = payload.get("dimension") if isinstance(payload, dict) else None
    if dimension is None and plausible_ref(named, 63):
        dimension = named
    if not isinstance(dimension, Dimension) and not plausible_ref(dimension, 63):
        dimension = None
    if grounding_id is not None:
        try:
            grounding_id = uuid.UUID(str(grounding_id))
        except ValueError:
            grounding_id = None
    if grounding_id is not None and dimension is None:
        dimension = dimension_name_of(grounding_id, actor=actor)
    return {
        "actor": actor,
        "grounding_id": grounding_id,
        "dimension": dimension,
        "expected_revision": _as_int(kwargs.get("expected_revision")),
    }


def _as_int(value: Any) -> int | None:
    """The expected revision as an audit column can hold it (any other value is noise)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31:
        return value
    return None


def open_link(
    grounding_id: Any,
    *,
    actor,
    roles: Iterable[Role],
    expected_revision: int,
    allow_retired: bool = False,
    check_profile: bool = True,
    live: bool = True,
) -> GroundingLink:
    """The link an operation changes, locked, with its preconditions checked in the
    one order every operation refuses in: the link (FOR UPDATE) among the actor's
    Dimensions, an active Dimension, one of `roles` there, a published profile (or a
    retired one, `allow_retired`), not withdrawn or disposed, and the expected revision.

    Another Dimension's link is `not_found` by the lookup itself, with the statements
    an unknown id costs: no precondition of it (active, profile, state) is ever read.

    Disposal passes `check_profile=False` (a lawful disposal does not depend on the
    profile's status) and `live=False` (a withdrawn link may be disposed; a disposed
    one is refused after the revision check, by disposal itself).
    """
    link = lock_link(grounding_id, actor=actor)
    require_active(link.dimension)
    require_role(actor, link.dimension, *roles)
    if check_profile:
        require_published(link.profile, allow_retired=allow_retired)
    if live:
        require_not_withdrawn(link)
    require_revision(link, expected_revision)
    return link


def lock_link(grounding_id: Any, *, actor) -> GroundingLink:
    """Fetch the link FOR UPDATE so concurrent writers queue on the row, among the
    links of the Dimensions where `actor` holds a role."""
    try:
        key = uuid.UUID(str(grounding_id))
    except ValueError as exc:
        raise Refusal("not_found", NO_SUCH_LINK) from exc
    try:
        return (
            GroundingLink.objects.select_for_update(of=("self",))
            .select_related("dimension", "profile", "current_statement", "current_passage")
            .filter(dimension_id__in=member_dimension_ids(actor))
            .get(pk=key)
        )
    except GroundingLink.DoesNotExist as exc:
        raise Refusal("not_found", NO_SUCH_LINK) from exc


def require_revision(link: GroundingLink, expected_revision: int) -> None:
    if expected_revision != link.revision:
        raise Refusal(
            "revision_mismatch",
            f"expected revision {expected_revision}, the link is at revision {link.revision}.",
            extra={"current_revision": link.revision},
        )


def require_not_withdrawn(link: GroundingLink) -> None:
    if link.record_state == RecordState.DISPOSED:
        raise Refusal("link_disposed", "the link has been disposed; only its tombstone remains.")
    if link.record_state == RecordState.WITHDRAWN:
        raise Refusal("link_withdrawn", "the link is withdrawn; it can no longer change.")


def assessment_facts(link: GroundingLink, assessments: list[Assessment]) -> list[AssessmentFacts]:
    return [
        AssessmentFacts(
            assessment_ref=a.assessment_ref,
            verdict=a.verdict,
            authorized=bool(a.authority_ref),
            current=a.grounding_revision >= link.basis_revision,
            selection_basis_ref=a.selection_basis_ref,
        )
        for a in assessments
    ]


def refresh_display(link: GroundingLink) -> None:
    """Recompute display_state, displayed_verdict and support_verdict_ref in place."""
    assessments = list(link.assessments.order_by("recorded_revision"))
    passage = link.current_passage.passage if link.current_passage_id else None
    display = derive_display(
        record_state=link.record_state,
        recheck_state=link.recheck_state,
        resolution_state=link.resolution_state,
        source_restricted=bool(passage and passage.access_label == "restricted"),
        assessments=assessment_facts(link, assessments),
    )
    link.display_state = display.display_state
    link.displayed_verdict = display.displayed_verdict
    link.support_verdict_ref = display.selected_assessment_ref


def save_revision(link: GroundingLink, *, actor, reason: str) -> None:
    """Bump the revision exactly once and save, writing one history row."""
    link.revision += 1
    save_tracked(link, actor=actor, reason=reason)


def save_tracked(obj, *, actor, reason: str) -> None:
    compat.set_history_context(obj, user=actor, reason=reason)
    obj.save()
