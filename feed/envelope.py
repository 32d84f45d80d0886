"""An outbox event as the CloudEvents 1.0 JSON its consumers receive (structured mode,
the `cloudevents` library's JSON format): the same bytes on every retry."""

from __future__ import annotations

from typing import Any

from cloudevents.core.formats.json import JSONFormat
from cloudevents.core.v1.event import CloudEvent

from feed.models import Event

CONTENT_TYPE = "application/cloudevents+json; charset=utf-8"
# The order of each kind's data members (jsonb keeps its own order).
DATA_ORDER = ("grounding_id", "passage_id", "import_id", "decision_ref", "revision",
              "record_state", "recheck_state", "display_state", "decision_state")  # fmt: skip
_FORMAT = JSONFormat()


def source(dimension_name: str) -> str:
    return f"urn:grounding:{dimension_name}"


def attributes(event: Event, dimension_name: str, logindex: int | None) -> dict[str, Any]:
    """The event's attributes (API.md "Event feed"); `logindex` once its leaf is in
    the Dimension's transparency log."""
    found: dict[str, Any] = {
        "id": str(event.event_id),
        "source": source(dimension_name),
        "type": event.type,
        "subject": event.subject,
        "time": event.time,
        "datacontenttype": "application/json",
        "partitionkey": event.subject,
        "sequence": event.sequence,
    }
    if logindex is not None:
        found["logindex"] = logindex
    return found


def data(event: Event) -> dict[str, Any]:
    stored = event.data or {}
    return {key: stored[key] for key in DATA_ORDER if key in stored}


def as_dict(event: Event, dimension_name: str, logindex: int | None) -> dict[str, Any]:
    return {**attributes(event, dimension_name, logindex), "specversion": "1.0",
            "data": data(event)}  # fmt: skip


def body(event: Event, dimension_name: str, logindex: int | None) -> bytes:
    """The structured-mode CloudEvent, JSON."""
    cloud = CloudEvent(attributes(event, dimension_name, logindex), data(event))
    return _FORMAT.write(cloud)
