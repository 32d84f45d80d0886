"""What every operation shares: one durable transaction, the lock, the checks in a
fixed order, the single revision bump, and the audit event of a refusal."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.db import transaction

from grounding.choices import RecordState
from grounding.display import AssessmentFacts, derive_display
from grounding.models import Assessment, GroundingLink
from policies import audit
from policies.kernel.refusals import Offender, Refusal
from policies.kernel.text import overlong_offenders, plausible_ref, unstorable_offenders

F = TypeVar("F", bound=Callable[..., Any])


def operation(action: str) -> Callable[[F], F]:
    """Run a keyword-only service in one durable transaction; audit its refusals.

    A refusal rolls back everything the operation wrote, then its audit event is
    written in a short transaction of its own (ARCHITECTURE.md "Audit").
    """

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def run(**kwargs: Any):
            try:
                refuse_invalid(_unstorable(kwargs))
                with transaction.atomic(durable=True):
                    return fn(**kwargs)
            except Refusal as refusal:
                _audit_refusal(action, refusal, kwargs)
                raise

        return run  # type: ignore[return-value]

    return decorate


# Inputs whose strings are not stored as they are, so GROUNDING_MAX_STRING_LENGTH does
# not bound them: from-citations' provider payload and passage texts (the 8 MiB body
# limit does; every link they produce passes the per-value limits of registration).
_UNBOUNDED_KWARGS = frozenset({"request"})


def _unstorable(kwargs: dict[str, Any]) -> list[Offender]:
    """Strings in the operation's input that no column can hold, located in the body
    they came from (a bulk body is {"items": [...]}, any other is the value itself;
    a string argument, such as a ref from the path, is `/<its name>`), and strings
    longer than GROUNDING_MAX_STRING_LENGTH. Checked before any lookup: even a query
    naming such a string fails."""
    max_length = settings.GROUNDING_MAX_STRING_LENGTH
    offenders: list[Offender] = []
    for name, value in kwargs.items():
        if isinstance(value, dict | list):
            base = "/items" if name == "items" else ""
        elif isinstance(value, str):
            base = f"/{name}"
        else:
            continue
        found = unstorable_offenders(value, base)
        if name not in _UNBOUNDED_KWARGS:
            found += overlong_offenders(value, max_length, base)
        offenders += found
    return offenders


def _audit_refusal(action: str, refusal: Refusal, kwargs: dict[str, Any]) -> None:
    grounding_id = kwargs.get("grounding_id")
    dimension = kwargs.get("dimension")
    payload = kwargs.get("payload")
    named = payload.get("dimension") if isinstance(payload, dict) else None
    if dimension is None and plausible_ref(named, 63):
        dimension = named
    if grounding_id is not None:
        try:
            grounding_id = uuid.UUID(str(grounding_id))
        except ValueError:
            grounding_id = None
    if grounding_id is not None and dimension is None:
        dimension = (
            GroundingLink.objects.filter(pk=grounding_id)
            .values_list("dimension__name", flat=True)
            .first()
        )
    audit.record_refusal(
        actor=kwargs.get("actor"),
        action=action,
        code=refusal.code,
        grounding_id=grounding_id,
        dimension=dimension,
        expected_revision=_as_int(kwargs.get("expected_revision")),
        resulting_revision=None,
    )


def _as_int(value: Any) -> int | None:
    """The expected revision as an audit column can hold it (any other value is noise)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31:
        return value
    return None


def lock_link(grounding_id: Any) -> GroundingLink:
    """Fetch the link FOR UPDATE so concurrent writers queue on the row."""
    try:
        key = uuid.UUID(str(grounding_id))
    except ValueError as exc:
        raise Refusal("not_found", "no grounding link has this id.") from exc
    try:
        return (
            GroundingLink.objects.select_for_update(of=("self",))
            .select_related("dimension", "profile", "current_statement", "current_passage")
            .get(pk=key)
        )
    except GroundingLink.DoesNotExist as exc:
        raise Refusal("not_found", "no grounding link has this id.") from exc


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


def refuse_invalid(offenders: list[Offender]) -> None:
    if offenders:
        raise Refusal("validation_error", "the request is not valid.", offenders=offenders)


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
    obj._history_user = actor
    obj._change_reason = reason
    obj.save()
