"""Where the transparency log (issue 28, the `transparency` app) plugs into the feed:
the one module that knows it.

An event's `logindex` is the index of its audit event's leaf in the Dimension's log.
The stream is ordered by (logindex, outbox id) and shows an event only once its leaf
is integrated: the log's indexes are contiguous per Dimension and given by the
sequencer to committed leaves only, in one transaction per batch, so a reader that
has seen index n has seen every event of indexes ≤ n, and a cursor there never
skips an event that commits later. The outbox's own ids are not like that: a write
that took id 10 may commit after a reader saw id 11 (docs/events.md "Why the log
orders the stream").

The same argument lets the delivery workers write a subscription's deliveries from
its place in the log (`last_index`, `events_between`, `behind`; feed.worker.fan_out).

With the log turned off (GROUNDING_LOG_ENABLED=0) events carry no logindex and the
stream falls back to outbox-id order, which is gap-free only without concurrent
writers; the outbox then writes the deliveries with the events.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterable
from datetime import datetime

from django.apps import apps
from django.conf import settings
from django.db.models import Exists, Max, Min, OuterRef, Sum

from feed.models import Event


def log_on() -> bool:
    return _log_installed() and getattr(settings, "GROUNDING_LOG_ENABLED", True)


@functools.cache
def _log_installed() -> bool:
    # Asked on every write; the installed apps do not change once loaded, and
    # `apps.is_installed` walks every app config on each call.
    return apps.is_installed("transparency")


def integrate(dimension: str | None = None, *, wait: bool = True) -> int:
    """Integrate committed pending leaves now (the log's sequencer); how many."""
    if not log_on():
        return 0
    from transparency import sequencer

    return sequencer.integrate(dimension, wait=wait)


def logindexes(audit_event_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, int]:
    """The leaf index of each audit event whose leaf is integrated."""
    ids = list(audit_event_ids)
    if not ids or not log_on():
        return {}
    from transparency import selectors

    return selectors.leaf_indexes(ids)


def integrated_page(
    dimension_id: int, after: tuple[int, int] | None, limit: int
) -> list[tuple[Event, int | None]]:
    """The Dimension's next `limit` events after the position `after` ((logindex,
    outbox id); None: from the start), in stream order, with their logindex."""
    if not log_on():
        events = Event.objects.filter(dimension_id=dimension_id).order_by("id")
        if after is not None:
            events = events.filter(id__gt=after[1])
        return [(event, None) for event in events[:limit]]
    from transparency.models import Leaf, Log

    leaf, log, event = Leaf._meta.db_table, Log._meta.db_table, Event._meta.db_table
    index, last_id = after if after is not None else (-1, 0)
    # The leaves of the Dimension's log from the cursor on, in index order (its
    # (log, index) key), each joined to its events (by the audit event's id).
    statement = (
        f'SELECT e.*, l."index" AS logindex FROM {leaf} l '
        f"JOIN {event} e ON e.audit_event_id = l.audit_event "
        f"WHERE l.log_id = (SELECT id FROM {log} WHERE dimension_id = %s) "
        f'AND l."index" IS NOT NULL '
        f'AND (l."index" > %s OR (l."index" = %s AND e.id > %s)) '
        f'ORDER BY l."index", e.id LIMIT %s'
    )
    rows = Event.objects.raw(statement, [dimension_id, index, index, last_id, limit])
    return [(row, row.logindex) for row in rows]


def last_index(dimension_id: int) -> int:
    """The index of the Dimension's last integrated leaf (-1: none). Read before the
    leaves up to it: the sequencer stores a batch's leaves and the log's new size in
    one transaction, so every leaf up to the size read is visible afterwards."""
    if not apps.is_installed("transparency"):
        return -1
    from transparency.models import Log

    size = Log.objects.filter(dimension_id=dimension_id).values_list("size", flat=True).first()
    return (size or 0) - 1


def events_between(dimension_id: int, after: int, upto: int) -> list[Event]:
    """The Dimension's events of the leaves after index `after` up to `upto`, in stream
    order (id, type, subject, sequence, time only)."""
    from transparency.models import Leaf, Log

    leaf, log, event = Leaf._meta.db_table, Log._meta.db_table, Event._meta.db_table
    statement = (
        f"SELECT e.id, e.type, e.subject, e.sequence, e.time FROM {leaf} l "
        f"JOIN {event} e ON e.audit_event_id = l.audit_event "
        f"WHERE l.log_id = (SELECT id FROM {log} WHERE dimension_id = %s) "
        f'AND l."index" > %s AND l."index" <= %s ORDER BY l."index", e.id'
    )
    return list(Event.objects.raw(statement, [dimension_id, after, upto]))


def oldest_after(dimension_id: int, after: int, types: list[str]) -> datetime | None:
    """The time of the oldest event of these types (empty: any) of the Dimension's
    leaves integrated after index `after`."""
    from transparency.models import Leaf

    leaves = Leaf.objects.filter(log__dimension_id=dimension_id, index__gt=after)
    events = Event.objects.filter(audit_event_id__in=leaves.values("audit_event"))
    if types:
        events = events.filter(type__in=types)
    return events.aggregate(oldest=Min("time"))["oldest"]


def behind(dimension: str, index: str) -> Exists:
    """Whether the log of the Dimension named by the outer query's field `dimension`
    has integrated a leaf after the outer query's field `index`."""
    from transparency.models import Log

    logs = Log.objects.filter(dimension_id=OuterRef(dimension), size__gt=OuterRef(index) + 1)
    return Exists(logs)


def leaf_index_of(event: Event) -> int | None:
    return logindexes([event.audit_event_id]).get(event.audit_event_id)


def head() -> tuple:
    """What changes whenever an event may have become readable: the outbox's last id
    and the logs' sizes (the stream's watcher polls it)."""
    last = Event.objects.order_by("-id").values_list("id", flat=True).first() or 0
    if not log_on():
        return (last, 0)
    from transparency.models import Log

    return (last, Log.objects.aggregate(size=Sum("size"))["size"] or 0)


def checkpoint_age_seconds(now: datetime) -> float | None:
    """Seconds since the least recently signed Dimension's latest checkpoint (None
    without a log, or before any checkpoint)."""
    if not log_on():
        return None
    from transparency.models import Log

    latest = [
        at
        for at in Log.objects.annotate(last=Max("checkpoints__signed_at")).values_list(
            "last", flat=True
        )
        if at is not None
    ]
    return (now - min(latest)).total_seconds() if latest else None
