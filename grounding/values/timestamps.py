"""RFC 3339 instants as the profile's timestamp_rule wants them: seconds and an
explicit offset or Z; partial dates are kept apart, never padded."""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime, timedelta, timezone

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$",
    re.ASCII,
)
PARTIAL_DATE = re.compile(r"^\d{4}(?:-\d{2}(?:-\d{2})?)?$", re.ASCII)


def parse_rfc3339(value: str) -> datetime | None:
    """An aware datetime for an RFC 3339 date-time, else None (leap seconds clamp to :59)."""
    # A pure function of the text, giving an immutable value: a bulk registration's
    # items mostly share their instants (two parses an item), so they are memoized;
    # only texts of a plausible length, so that junk cannot fill the memo.
    if isinstance(value, str) and len(value) <= _MEMO_LENGTH:
        return _parse_memoized(value)
    return _parse(value)


_MEMO_LENGTH = 40


@functools.lru_cache(maxsize=4096)
def _parse_memoized(value: str) -> datetime | None:
    return _parse(value)


def _parse(value: str) -> datetime | None:
    m = _RFC3339.match(value)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.group(1, 2, 3, 4, 5, 6))
    if second > 60:
        return None
    offset: timezone = UTC
    if m.group(8) not in ("Z", "z"):
        off_h, off_m = int(m.group(9)), int(m.group(10))
        if off_h > 23 or off_m > 59:
            return None
        delta = timedelta(hours=off_h, minutes=off_m)
        offset = timezone(-delta if m.group(8)[0] == "-" else delta)
    try:
        instant = datetime(year, month, day, hour, minute, min(second, 59), tzinfo=offset)
        # In UTC: RFC 3339 allows offsets up to ±23:59, PostgreSQL's timestamptz input
        # only up to ±15:59 (a query or row with +22:09 was a 400 "cannot store").
        # The instant is the same; an offset taking it past year 1 or 9999 is none.
        return instant.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
