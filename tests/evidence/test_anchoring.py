"""The reference resolver: every match counted, none picked, NFC code points."""

from __future__ import annotations

import hashlib
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evidence.anchoring import RESOLVER_REF, Match, Resolution, resolve


def nfc_sha(text: str) -> str:
    return hashlib.sha256(unicodedata.normalize("NFC", text).encode()).hexdigest()


TEXT = "The bridge opened in 1932. The bridge closed in 1990."


def test_one_quote_match_is_resolved():
    r = resolve({"type": "TextQuoteSelector", "exact": "opened in 1932"}, TEXT)
    assert r == Resolution("resolved", (Match(11, 25),), nfc_sha(TEXT), None)


def test_several_quote_matches_are_ambiguous_and_all_reported():
    r = resolve({"type": "TextQuoteSelector", "exact": "The bridge"}, TEXT)
    assert r.status == "ambiguous"
    assert r.matches == (Match(0, 10), Match(27, 37))
    assert r.as_anchor_result() == {
        "status": "ambiguous",
        "match_count": 2,
        "matches": [{"start": 0, "end": 10}, {"start": 27, "end": 37}],
        "resolver_ref": RESOLVER_REF,
        "text_sha256": nfc_sha(TEXT),
    }


def test_prefix_and_suffix_narrow_the_matches():
    selector = {"type": "TextQuoteSelector", "exact": "bridge", "prefix": ". The ", "suffix": " c"}
    assert resolve(selector, TEXT).matches == (Match(31, 37),)


def test_overlapping_occurrences_count():
    r = resolve({"type": "TextQuoteSelector", "exact": "aa"}, "aaa")
    assert (r.status, r.matches) == ("ambiguous", (Match(0, 2), Match(1, 3)))


def test_no_match_is_unresolved_with_a_reason():
    r = resolve({"type": "TextQuoteSelector", "exact": "opened in 1933"}, TEXT)
    assert r.as_anchor_result() == {
        "status": "unresolved",
        "match_count": 0,
        "matches": [],
        "resolver_ref": RESOLVER_REF,
        "text_sha256": nfc_sha(TEXT),
        "reason": "no_match",
    }


def test_quote_and_text_are_compared_in_nfc():
    nfd = "Cafe\u0301 \U0001d518 cafe\u0301"
    r = resolve({"type": "TextQuoteSelector", "exact": "Caf\u00e9 \U0001d518"}, nfd)
    assert (r.status, r.matches) == ("resolved", (Match(0, 6),))
    assert r.text_sha256 == nfc_sha(nfd)


def test_position_selector_in_range_is_one_match():
    r = resolve({"type": "TextPositionSelector", "start": 4, "end": 10}, TEXT)
    assert (r.status, r.matches) == ("resolved", (Match(4, 10),))


@pytest.mark.parametrize(("start", "end"), [(-1, 3), (5, 4), (0, len(TEXT) + 1)])
def test_position_selector_out_of_range_is_unresolved(start, end):
    r = resolve({"type": "TextPositionSelector", "start": start, "end": end}, TEXT)
    assert (r.status, r.matches, r.reason) == ("unresolved", (), "out_of_range")


def test_wsp_segment_reference_resolves_against_the_supplied_segments():
    segments = [
        {"start": 0, "end": 27, "text": TEXT[:27]},
        {"start": 27, "end": 53, "text": TEXT[27:]},
    ]
    r = resolve(
        {"type": "WspSegmentSelector", "segment": 1, "field": "text"}, TEXT, segments=segments
    )
    assert (r.status, r.matches) == ("resolved", (Match(27, 53),))
    missing = resolve({"type": "WspSegmentSelector", "segment": 2}, TEXT, segments=segments)
    assert (missing.status, missing.reason) == ("unresolved", "out_of_range")
    absent = resolve({"type": "WspSegmentSelector", "segment": 0}, TEXT)
    assert (absent.status, absent.reason) == ("unresolved", "segments_unavailable")


def test_unknown_selector_type_is_unresolved_selector_unsupported():
    r = resolve({"type": "XPathSelector", "value": "/p[1]"}, TEXT)
    assert (r.status, r.reason) == ("unresolved", "selector_unsupported")


@given(st.text(), st.integers(0, 40), st.integers(0, 40))
def test_position_matches_agree_with_python_slicing_on_nfc_text(text, a, b):
    normalized = unicodedata.normalize("NFC", text)
    start, end = sorted((a, b))
    r = resolve({"type": "TextPositionSelector", "start": start, "end": end}, text)
    if end <= len(normalized):
        assert r.matches == (Match(start, end),)
    else:
        assert r.status == "unresolved"


@given(st.text(min_size=1), st.data())
def test_every_quote_match_slices_to_the_nfc_quote(text, data):
    normalized = unicodedata.normalize("NFC", text)
    start = data.draw(st.integers(0, len(normalized) - 1))
    end = data.draw(st.integers(start + 1, len(normalized)))
    exact = normalized[start:end]
    r = resolve({"type": "TextQuoteSelector", "exact": exact}, text)
    quote = unicodedata.normalize("NFC", exact)
    assert all(normalized[m.start : m.end] == quote for m in r.matches)
    expected = sum(1 for i in range(len(normalized)) if normalized.startswith(quote, i))
    assert len(r.matches) == expected
    assert r.status == {0: "unresolved", 1: "resolved"}.get(expected, "ambiguous")
