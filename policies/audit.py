"""Audit events: every operation, accepted or refused, writes exactly one.

Accepted operations write their event inside their own transaction, so an applied
change without its event cannot exist. Refusals roll their writes back, so their
event is written afterwards, by `policies.actions.audit_refusal` (the one writer of
refused events; policies.actions says where it runs).
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings
from django.db import router, transaction
from django.db.models import QuerySet

from common.kernel import along
from common.kernel.along import Along
from common.kernel.refusals import Refusal
from common.kernel.request_context import current_request_id, note_refusal
from common.kernel.rows import new_instance
from common.kernel.together import Insert, insert_together
from policies.choices import AuditOutcome, Role
from policies.memberships import memberships
from policies.models import AuditEvent, Dimension, DimensionMembership

logger = logging.getLogger("grounding.audit")

# Who reads a Dimension's audit events (the API, the admin): its stewards.
STEWARD_ROLES = (Role.STEWARD, Role.ACCESS_STEWARD)

# Which Dimension a grounding link is in, for the event of a refusal that names only
# the link. The grounding app sits above policies and tells it at start-up
# (grounding.apps); until then no Dimension is recorded.
_link_dimension: list[Callable[..., str | None]] = []


def set_link_dimension_lookup(lookup: Callable[..., str | None]) -> None:
    """`lookup(grounding_id, actor=…)`: the link's Dimension name among the actor's."""
    _link_dimension[:] = [lookup]


def link_dimension(grounding_id: uuid.UUID, *, actor=None) -> str | None:
    """The name of the Dimension of this link, or None if there is no such link (with
    `actor`: none among the Dimensions where the actor holds a role)."""
    return _link_dimension[0](grounding_id, actor=actor) if _link_dimension else None


# Listeners of accepted writes: what must be written in the same transaction as an
# applied event (the transparency log's leaf queue, the event feed's outbox). Apps
# register at start-up (`apps.py` `ready()`); each is called, in registration order,
# inside the write's transaction with the applied events just written, in the order
# they were written, and returns the statements its rows need (or writes them itself
# and returns None). The listeners' statements are sent together (`common.kernel.along`:
# one statement on PostgreSQL). A listener that raises fails the write: nothing is
# half-written.
AppliedListener = Callable[[Sequence[AuditEvent]], Sequence[Along] | None]
_applied_listeners: dict[str, AppliedListener] = {}


def on_applied(name: str, listener: AppliedListener) -> None:
    """Register (or, under the same name, replace) a listener of applied events."""
    _applied_listeners[name] = listener


def _applied(events: Sequence[AuditEvent]) -> None:
    statements: list[Along] = []
    for listener in _applied_listeners.values():
        statements += listener(events) or ()
    if statements:
        along.send(router.db_for_write(AuditEvent), statements)


def _actor_ref(actor) -> str:
    if actor is None or not getattr(actor, "is_authenticated", False):
        return "anonymous"
    return f"user:{actor.get_username()}"


def record(
    *,
    actor,
    action: str,
    outcome: str = AuditOutcome.APPLIED,
    code: str = "",
    grounding_id: uuid.UUID | None = None,
    dimension: Dimension | str | None = None,
    expected_revision: int | None = None,
    resulting_revision: int | None = None,
    decision_ref: str = "",
    references: dict[str, Any] | None = None,
) -> AuditEvent:
    """Write one audit event. `references` holds identifiers only, never source text.

    A refused event is recorded under the Dimension named only when the actor holds a
    role there; otherwise under none (operators see it). A refusal must not land in
    a Dimension the caller has nothing to do with: its members would read what a
    stranger tried, and the name a stranger sent would be recorded as theirs."""
    named = dimension.name if isinstance(dimension, Dimension) else (dimension or "")
    if outcome == AuditOutcome.REFUSED:
        named = _held_dimension(actor, named)
    event = AuditEvent.objects.create(
        actor=actor if getattr(actor, "pk", None) else None,
        actor_ref=_actor_ref(actor),
        action=action,
        outcome=outcome,
        code=code,
        grounding_id=grounding_id,
        dimension_ref=named,
        expected_revision=expected_revision,
        resulting_revision=resulting_revision,
        decision_ref=decision_ref,
        request_id=current_request_id() or "",
        references=references or {},
    )
    _mirror(event)
    if outcome == AuditOutcome.REFUSED:
        note_refusal(code)
    else:
        _applied((event,))
    return event


def _held_dimension(actor, name: str) -> str:
    """`name` when the actor holds a role in the Dimension of that name, else ""."""
    if not name:
        return ""
    held = memberships(actor)
    for pk, roles in held.roles.items():
        if roles and held.dimensions[pk].name == name:
            return name
    return ""


def record_many(
    *,
    actor,
    action: str,
    entries: list[dict[str, Any]],
    along: Sequence[Insert] = (),
    change_reason: str = "",
) -> list[AuditEvent]:
    """Write one applied event per entry in a single insert (bulk operations).

    `along`: the operation's own new rows (and their history rows, `change_reason`),
    written with the events in one statement where `insert_together` can: the events
    and what they record reach the database together, in one round trip.
    """
    request_id = current_request_id() or ""
    common = {
        "actor": actor if getattr(actor, "pk", None) else None,
        "actor_ref": _actor_ref(actor),
        "action": action,
        "outcome": AuditOutcome.APPLIED,
        "request_id": request_id,
    }
    events = [new_instance(AuditEvent, {**common, **entry}) for entry in entries]
    insert_together(
        [*along, Insert(AuditEvent, events, history=False)],
        user=actor,
        change_reason=change_reason,
    )
    path = _mirror_path()
    if path:
        for event in events:
            _mirror(event, path)
    _applied(events)
    return events


def _mirror_path() -> str:
    return getattr(settings, "GROUNDING_AUDIT_LOG_PATH", "")


def _mirror(event: AuditEvent, path: str | None = None) -> None:
    path = _mirror_path() if path is None else path
    if not path:
        return
    line = {
        "event_id": str(event.event_id),
        "occurred_at": event.occurred_at.isoformat(),
        "actor_ref": event.actor_ref,
        "action": event.action,
        "outcome": event.outcome,
        "code": event.code,
        "grounding_id": str(event.grounding_id) if event.grounding_id else None,
        "dimension": event.dimension_ref,
        "expected_revision": event.expected_revision,
        "resulting_revision": event.resulting_revision,
        "decision_ref": event.decision_ref,
        "request_id": event.request_id,
    }

    def write() -> None:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, sort_keys=True) + "\n")

    # Only events whose transaction committed are mirrored.
    transaction.on_commit(write)


def events_visible_to(user) -> QuerySet[AuditEvent]:
    """Superusers see every event; stewards see their Dimensions' events."""
    if getattr(user, "is_superuser", False):
        return AuditEvent.objects.all()
    stewarded = list(
        DimensionMembership.objects.filter(user=user, role__in=STEWARD_ROLES).values_list(
            "dimension__name", flat=True
        )
    )
    if not stewarded:
        raise Refusal("role_required", "audit events are read by stewards of a Dimension.")
    return AuditEvent.objects.filter(dimension_ref__in=stewarded)
