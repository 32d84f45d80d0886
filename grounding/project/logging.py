"""JSON-lines log formatting: one JSON object per record, carrying the request id.

Used by `settings.LOGGING` for everything written to stdout. Messages are the
caller's text; callers must not log protected source text.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from common.kernel.request_context import current_request_id

# Attributes every LogRecord has; anything else on a record came from `extra=`.
_STANDARD_ATTRS = frozenset(
    vars(logging.LogRecord("", logging.INFO, "", 0, "", (), None)).keys()
    | {"message", "asctime", "taskName"}
)


# `django.request` and `django.server` attach the request object; its id is kept, the
# object itself is not written.
_DROPPED = frozenset({"request", "server_time"})


def _request_id(record: logging.LogRecord) -> str | None:
    explicit = getattr(record, "request_id", None)
    if explicit:
        return explicit
    current = current_request_id()
    if current:
        return current
    # Django logs 4xx/5xx responses after the middleware chain has returned.
    return getattr(getattr(record, "request", None), "request_id", None)


class JsonFormatter(logging.Formatter):
    """Format a record as a single-line JSON object.

    Keys: `time` (ISO 8601, UTC), `level`, `logger`, `message`, `request_id`
    (the current request's id, or null outside a request), then any `extra=`
    fields, and `exc_info` / `stack_info` when present. Newlines inside values
    are escaped by JSON, so one record is always exactly one line.
    """

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": _request_id(record),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and key not in payload and key not in _DROPPED:
                payload[key] = value
        if record.exc_info:
            payload["exc_info"] = self.formatException(record.exc_info)
        if record.stack_info:
            payload["stack_info"] = self.formatStack(record.stack_info)
        return json.dumps(payload, default=str, ensure_ascii=False)
