"""The outbox's write on databases other than PostgreSQL (SQLite: local runs and the
default test pass): the same rows as `feed.outbox`'s one statement, through the ORM."""

from __future__ import annotations

from django.db.models import Q
from django.utils import timezone

from common.kernel.identifiers import uuid7
from feed.choices import EventType
from feed.models import Delivery, Event, Webhook
from feed.outbox import Planned
from policies.models import Dimension


def write_with_orm(using: str, planned: Planned, deliveries: bool) -> None:
    from evidence.models import Passage
    from grounding.models import GroundingLink

    events: list[Event] = []
    if planned.links:
        links = GroundingLink.objects.using(using).in_bulk([gid for _, gid, _, _ in planned.links])
        for audit, gid, kind, at in planned.links:
            link = links.get(gid)
            if link is None:
                continue
            data = {
                "grounding_id": str(gid),
                "revision": link.revision,
                "record_state": link.record_state,
                "recheck_state": link.recheck_state,
                "display_state": link.display_state,
            }
            events.append(_event(link.dimension_id, kind, str(gid), link.revision, at, audit, data))
    if planned.imports:
        # Every import's passages in one query.
        by_import = {import_id: (audit, at) for audit, import_id, at in planned.imports}
        passages = Passage.objects.using(using).filter(
            Q(retrieval_observation_id__in=by_import) | Q(document_id__in=by_import)
        )
        for passage_id, dimension_id, envelope, document in passages.order_by(
            "passage_id"
        ).values_list("passage_id", "dimension_id", "retrieval_observation_id", "document_id"):
            import_id = envelope or document
            audit, at = by_import[import_id]
            data = {"passage_id": str(passage_id), "import_id": str(import_id)}
            events.append(
                _event(dimension_id, EventType.PASSAGE_IMPORTED, str(passage_id), 1, at, audit,
                       data)
            )  # fmt: skip
    if planned.decisions:
        names = {name for _, _, name, *_ in planned.decisions}
        dimensions = dict(
            Dimension.objects.using(using).filter(name__in=names).values_list("name", "pk")
        )
        for audit, ref, name, kind, sequence, state, at in planned.decisions:
            data = {"decision_ref": ref, "decision_state": state}
            events.append(_event(dimensions[name], kind, ref, sequence, at, audit, data))
    if not events:
        return
    Event.objects.using(using).bulk_create(events)
    if not deliveries:
        return
    now = timezone.now()
    hooks = Webhook.objects.using(using).filter(
        dimension_id__in={e.dimension_id for e in events}, active=True
    )
    deliveries = [
        Delivery(webhook=hook, event=event, subject=event.subject, sequence=event.sequence,
                 due_at=now)
        for event in events
        for hook in hooks
        if hook.dimension_id == event.dimension_id
        and (not hook.event_types or event.type in hook.event_types)
    ]  # fmt: skip
    Delivery.objects.using(using).bulk_create(deliveries)


def _event(dimension_id, kind, subject, sequence, at, audit, data) -> Event:
    return Event(
        event_id=uuid7(),
        dimension_id=dimension_id,
        type=kind,
        subject=subject,
        sequence=sequence,
        time=at,
        audit_event_id=audit,
        data=data,
    )
