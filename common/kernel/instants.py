"""Instants as the API writes them: RFC 3339 in UTC with a `Z` (one spelling for every
document the registry renders: links, passages, exports)."""

from __future__ import annotations

from datetime import datetime


def rfc3339(value: datetime | None) -> str | None:
    """`2026-12-02T05:27:20.123456Z` for an aware UTC instant; None stays None."""
    return value.isoformat().replace("+00:00", "Z") if value else None
