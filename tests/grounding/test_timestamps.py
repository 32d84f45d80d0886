"""grounding.values.timestamps.parse_rfc3339: RFC 3339 instants, memoized for short
texts only, the memo giving what a fresh parse gives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grounding.values import timestamps
from grounding.values.timestamps import parse_rfc3339


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-30T12:00:00Z", datetime(2026, 11, 30, 12, tzinfo=UTC)),
        ("2026-11-30t12:00:00z", datetime(2026, 11, 30, 12, tzinfo=UTC)),
        (
            "2026-11-30T12:00:00.123456789+05:30",
            datetime(2026, 11, 30, 12, tzinfo=timezone(timedelta(hours=5, minutes=30))),
        ),
        ("2016-12-31T23:59:60Z", datetime(2016, 12, 31, 23, 59, 59, tzinfo=UTC)),
        ("2026-11-30T12:00:00", None),  # no offset
        ("2026-02-30T12:00:00Z", None),
        ("2026-11-30T12:00:61Z", None),
        ("2026-11-30T12:00:00+24:00", None),
        ("2026-11-30", None),
    ],
)
def test_instants_parse_as_the_timestamp_rule_says(text, expected):
    assert parse_rfc3339(text) == expected
    assert parse_rfc3339(text) == expected  # the memoized answer, the second time


@pytest.mark.parametrize(
    ("text", "utc"),
    [
        ("2521-04-18T01:01:08.8509+22:09", datetime(2521, 4, 17, 2, 52, 8, tzinfo=UTC)),
        ("3540-01-01T00:00:00-23:59", datetime(3540, 1, 1, 23, 59, tzinfo=UTC)),
        ("2026-11-30T12:00:00+05:30", datetime(2026, 11, 30, 6, 30, tzinfo=UTC)),
    ],
)
def test_every_instant_is_given_in_utc(text, utc):
    # PostgreSQL takes offsets up to ±15:59 only: the instant goes to it in UTC.
    parsed = parse_rfc3339(text)
    assert (parsed, parsed.utcoffset()) == (utc, timedelta(0))


@pytest.mark.parametrize("text", ["9999-12-31T23:00:00-01:00", "0001-01-01T00:30:00+01:00"])
def test_an_offset_taking_the_instant_past_the_calendar_is_no_instant(text):
    assert parse_rfc3339(text) is None


def test_long_texts_are_parsed_but_never_memoized():
    before = timestamps._parse_memoized.cache_info().currsize
    long_valid = "2026-11-30T12:00:00." + "1" * 60 + "Z"
    assert parse_rfc3339(long_valid) == datetime(2026, 11, 30, 12, tzinfo=UTC)
    assert parse_rfc3339("x" * 10_000) is None
    assert timestamps._parse_memoized.cache_info().currsize == before


_instants = st.builds(
    "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}{}{}".format,
    st.integers(0, 9999), st.integers(0, 13), st.integers(0, 32), st.integers(0, 25),
    st.integers(0, 61), st.integers(0, 61), st.sampled_from(["", ".5", ".000001"]),
    st.sampled_from(["Z", "z", "+00:00", "-23:59", "+24:00", ""]),
)  # fmt: skip


@settings(max_examples=400, derandomize=True)
@given(_instants | st.text(max_size=50))
def test_the_memo_answers_what_a_fresh_parse_answers(text):
    assert parse_rfc3339(text) == timestamps._parse(text)
    assert parse_rfc3339(text) == timestamps._parse(text)
