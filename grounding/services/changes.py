"""Change notifications: a source, answer, policy or assessment change is recorded
once per `change_ref` in a Dimension and fans out to the links it affects, each of
which gets exactly one new revision in `pending_review` (API.md "Change
notifications").

Transactions. A notification that affects at most one batch of links (BATCH_SIZE)
is recorded and applied in one transaction, with its audit events. A larger one is
recorded, with its first batch, in a first transaction; each further batch is a
short transaction of its own, and the record is marked complete (`completed_at`,
`affected`) in the last one. Until then the record reads as incomplete. Whoever
posts the same notification again (a retry after a crash or a timeout, or a
concurrent duplicate) resumes the remaining batches, so every affected link still
gets exactly one revision: a batch locks its links and skips those the notification
has already revised, and a database constraint backs that up.

So `notify_change` is not one transaction but a sequence of public entries
(`_open`, `_continue`, `_start`: entries of the one operation NOTIFY_CHANGE,
policies.operations), each one durable transaction.
`do_notify_source_changes` is a body: it runs inside its caller's transaction (the
WSP import) and applies every batch there. What a notification may say, and the
digest that tells its replay from a conflict, is `grounding.services.change_rules`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import IntegrityError
from django.utils import timezone

from common.kernel.refusals import Offender, Refusal
from grounding import bodies
from grounding.choices import ChangeKind
from grounding.models import ChangeNotification
from grounding.services import fanout
from grounding.services._common import refusal_context, refuse_invalid, save_tracked
from grounding.services.change_rules import body_sha256, posted_values, value_offenders
from grounding.services.fanout import BATCH_SIZE, apply_batch, candidate_keys
from policies import audit
from policies.actions import composable
from policies.choices import Role
from policies.memberships import memberships
from policies.models import Dimension
from policies.operations import Operation
from policies.services import require_active, require_role

NOTIFYING_ROLES = (Role.CURATOR, Role.STEWARD)


@dataclass
class Outcome:
    notification: ChangeNotification
    created: bool


@composable
def _do_open(*, actor, payload: Any, batch_size: int) -> tuple[Outcome, Any]:
    """The posted notification recorded with its first batch (or its replay)."""
    dimension, values = _validated(actor, payload)
    existing = (
        ChangeNotification.objects.select_for_update(of=("self",))
        .select_related("dimension")
        .filter(dimension=dimension, change_ref=values["change_ref"])
        .first()
    )
    if existing is not None:
        _require_same(existing, values)
        audit.record(
            actor=actor,
            action=NOTIFY_CHANGE.action,
            dimension=dimension,
            references={"change_ref": existing.change_ref, "replay": True},
        )
        return Outcome(existing, created=False), None
    notification = _record(actor, dimension, values)
    batch = apply_batch(notification, actor=actor, batch_size=batch_size)
    if batch.is_final(batch_size):
        _complete(notification, actor=actor)
    return Outcome(notification, created=True), batch.cursor


@composable
def _do_continue(*, actor, notification_id, after, batch_size: int, scope=None, keys=None):
    """One further batch (of `keys` when given: `apply_batch`); the record's lock keeps
    two resumers of the same notification from interleaving."""
    notification = (
        ChangeNotification.objects.select_for_update(of=("self",))
        .select_related("dimension")
        .get(pk=notification_id)
    )
    if notification.completed_at is not None:
        return notification, None
    batch = apply_batch(
        notification, actor=actor, after=after, batch_size=batch_size, scope=scope, keys=keys
    )
    if batch.is_final(batch_size):
        _complete(notification, actor=actor)
    return notification, batch.cursor


@composable
def _do_start(*, actor, dimension: Dimension, values: dict[str, Any], scope, batch_size: int):
    """A notification made here (not posted) recorded with its first batch."""
    notification = _record(actor, dimension, values)
    batch = apply_batch(notification, actor=actor, batch_size=batch_size, scope=scope)
    if batch.is_final(batch_size):
        _complete(notification, actor=actor)
    return notification, batch.cursor


def fan_out(
    actor, dimension: Dimension, values: dict[str, Any], *, scope=None, batch_size=BATCH_SIZE
) -> ChangeNotification:
    """A notification made here (not posted: the review-deadline sweep), recorded with
    its first batch, then one transaction per further batch."""
    notification, cursor = _start(
        actor=actor, dimension=dimension, values=values, scope=scope, batch_size=batch_size
    )
    return finish(actor, notification, after=cursor, scope=scope, batch_size=batch_size)


def finish(
    actor, notification: ChangeNotification, *, after=None, scope=None, batch_size=BATCH_SIZE
) -> ChangeNotification:
    """Apply the remaining batches of a recorded notification, one transaction each.

    The keys still to do are read once; each batch takes the next of them (locking
    and judging them again), and batches that search afresh end the fan-out."""
    cursor = after
    batches = _key_batches(notification, batch_size, after=cursor, scope=scope)
    while notification.completed_at is None:
        notification, cursor = _continue(
            actor=actor,
            notification_id=notification.pk,
            after=cursor,
            batch_size=batch_size,
            scope=scope,
            keys=next(batches),
        )
    return notification


def _key_batches(
    notification: ChangeNotification, size: int, *, after=None, scope=None
) -> Iterator[list | None]:
    """The keys the notification still has to do, read once, `size` at a time; then
    None for ever (a batch that searches, which decides the end)."""
    if notification.completed_at is None:
        pending = candidate_keys(notification, after=after, scope=scope)
        for start in range(0, len(pending), size):
            yield pending[start : start + size]
    while True:
        yield None


def notify_change(*, actor, payload: Any, batch_size: int = BATCH_SIZE) -> Outcome:
    """Record and fan out one posted notification; the same again resumes or replays.

    Refusals (`validation_error`, `not_found`, `role_required`, `change_conflict`) are
    audited and leave nothing written."""
    try:
        outcome, cursor = _open(actor=actor, payload=payload, batch_size=batch_size)
    except IntegrityError:
        # A concurrent first post of the same change_ref committed first: this one
        # is its replay.
        outcome, cursor = _open(actor=actor, payload=payload, batch_size=batch_size)
    outcome.notification = finish(actor, outcome.notification, after=cursor, batch_size=batch_size)
    return outcome


NOTIFY_CHANGE = Operation(
    fanout.ACTION,
    run=notify_change,
    input=bodies.ChangeNotificationRequestSerializer,
    output="grounding.api.serializers_changes.ChangeNotificationSerializer",
    roles=NOTIFYING_ROLES,
    # A Dimension where the caller holds no role is not_found.
    refusals=(
        "validation_error",
        "not_found",
        "dimension_inactive",
        "role_required",
        "change_conflict",
    ),
    success=(200, 201),
    headers=("Location",),
    summary="Record a change notification and send the links it affects to review",
    context=refusal_context,
)
# One durable transaction each. `_start`'s values are made here, never posted: there is
# nothing to screen.
_open = NOTIFY_CHANGE.entry_of(_do_open)
_continue = NOTIFY_CHANGE.entry_of(_do_continue)
_start = NOTIFY_CHANGE.entry_of(_do_start, screen=None)


@composable
def do_notify_source_changes(
    *,
    actor,
    dimension: Dimension,
    changes: list[tuple[str, str, str]],
    observed_at: datetime | None = None,
) -> list[dict[str, Any]]:
    """Record a `source` notification per `(canonical_url, change_ref, reason)` and send
    the Dimension's links bound to that source back to review, all inside the caller's
    transaction (for the WSP import). Returns the import report's `changes` entries,
    `[{"canonical_url", "change_ref", "affected"}]`, in the order given.

    Idempotent per change_ref: a change_ref already recorded with the same body is
    reported as it was (no new revision); with another body it raises Refusal
    `change_conflict`, and the caller's transaction should roll back. `observed_at`
    (default: none recorded) is part of the body, so a replaying import should pass
    the same value or none.
    """
    require_active(dimension)
    require_role(actor, dimension, *NOTIFYING_ROLES)
    entries = []
    for canonical_url, change_ref, reason in changes:
        values = {
            "change_ref": change_ref,
            "kind": ChangeKind.SOURCE,
            "subject_ref": canonical_url,
            "observed_at": observed_at,
            "reason": reason,
        }
        refuse_invalid(value_offenders(values, pointer_base=""))
        notification = record_and_apply(actor, dimension, values)
        entries.append(
            {
                "canonical_url": canonical_url,
                "change_ref": change_ref,
                "affected": notification.affected,
            }
        )
    return entries


def record_and_apply(
    actor, dimension: Dimension, values: dict[str, Any], *, scope=None
) -> ChangeNotification:
    """In the caller's transaction: the notification (or its same-body replay) with
    every batch applied."""
    existing = (
        ChangeNotification.objects.select_for_update(of=("self",))
        .select_related("dimension")
        .filter(dimension=dimension, change_ref=values["change_ref"])
        .first()
    )
    if existing is not None:
        _require_same(existing, values)
        notification = existing
    else:
        notification = _record(actor, dimension, values)
    cursor = None
    batches = _key_batches(notification, BATCH_SIZE, scope=scope)
    while notification.completed_at is None:
        batch = apply_batch(
            notification, actor=actor, after=cursor, scope=scope, keys=next(batches)
        )
        if batch.is_final(BATCH_SIZE):
            _complete(notification, actor=actor)
        cursor = batch.cursor
    return notification


def _record(actor, dimension: Dimension, values: dict[str, Any]) -> ChangeNotification:
    notification = ChangeNotification(
        dimension=dimension,
        change_ref=values["change_ref"],
        kind=values["kind"],
        subject_ref=values["subject_ref"],
        observed_at=values["observed_at"],
        reason=values["reason"],
        body_sha256=body_sha256(values),
        recorded_by=actor if getattr(actor, "pk", None) else None,
    )
    save_tracked(notification, actor=actor, reason=f"change {notification.change_ref} recorded")
    return notification


def _complete(notification: ChangeNotification, *, actor) -> None:
    notification.affected = notification.affected_links.count()
    notification.completed_at = timezone.now()
    save_tracked(notification, actor=actor, reason=f"change {notification.change_ref} applied")
    audit.record(
        actor=actor,
        action=NOTIFY_CHANGE.action,
        dimension=notification.dimension,
        references={
            "change_ref": notification.change_ref,
            "kind": notification.kind,
            "affected": notification.affected,
        },
    )


def _require_same(existing: ChangeNotification, values: dict[str, Any]) -> None:
    if existing.body_sha256 != body_sha256(values):
        raise Refusal(
            "change_conflict",
            "this change_ref is already recorded in the Dimension with another body.",
            extra={"change_ref": existing.change_ref},
        )


def _validated(actor, payload: Any) -> tuple[Dimension, dict[str, Any]]:
    """The Dimension named (visible, active, the caller notifying in it), then the
    values (`change_rules.posted_values`): who may post is judged before what."""
    if not isinstance(payload, dict):
        refuse_invalid([Offender("", "type", "the body must be an object.")])
    name = payload.get("dimension")
    if not isinstance(name, str) or not name.strip():
        refuse_invalid([Offender("/dimension", "required", "dimension is required.")])
    # A Dimension where the caller holds no role is not disclosed to exist.
    dimension = memberships(actor).named(name)
    if dimension is None:
        raise Refusal("not_found", "no Dimension of this name is visible to you.")
    require_active(dimension)
    require_role(actor, dimension, *NOTIFY_CHANGE.roles)
    return dimension, posted_values(payload)
