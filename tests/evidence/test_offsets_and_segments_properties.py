"""Property tests: offset converters invert each other; segments and hashes round-trip."""

from __future__ import annotations

import hashlib
import itertools
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evidence.offsets import (
    codepoint_to_utf8,
    codepoint_to_utf16,
    nfc,
    utf8_to_codepoint,
    utf16_to_codepoint,
)
from evidence.wsp import validate_response
from tests.evidence.conftest import load

# Astral characters, combining marks and plain text, mixed (U+0000 is unstorable: refused
# by the validator as unstorable_character, so it is not part of the round trip).
unicode_text = st.text(
    alphabet=st.one_of(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
        st.sampled_from(["\u0301", "\u0308", "\u0323", "e", "\U0001d518", "\U0001f600", "한"]),
    )
)


@given(unicode_text, st.data())
def test_utf16_and_utf8_converters_invert_each_other(text, data):
    offset = data.draw(st.integers(0, len(text)))
    units = codepoint_to_utf16(text, offset)
    assert units == len(text[:offset].encode("utf-16-le")) // 2
    assert utf16_to_codepoint(text, units) == offset
    size = codepoint_to_utf8(text, offset)
    assert size == len(text[:offset].encode("utf-8"))
    assert utf8_to_codepoint(text, size) == offset


def test_an_offset_inside_a_surrogate_pair_is_refused():
    text = "a\U0001d518b"
    assert codepoint_to_utf16(text, 2) == 3
    with pytest.raises(ValueError, match="surrogate pair"):
        utf16_to_codepoint(text, 2)


def test_an_offset_inside_a_multibyte_sequence_is_refused():
    text = "aé"
    assert codepoint_to_utf8(text, 2) == 3
    with pytest.raises(ValueError, match="multibyte sequence"):
        utf8_to_codepoint(text, 2)


@pytest.mark.parametrize(
    "convert", [codepoint_to_utf16, codepoint_to_utf8, utf16_to_codepoint, utf8_to_codepoint]
)
def test_out_of_range_offsets_are_refused(convert):
    with pytest.raises(ValueError):
        convert("abc", 4)
    with pytest.raises(ValueError):
        convert("abc", -1)


def test_nfc_composes():
    assert nfc("Cafe\u0301") == "Caf\u00e9"


@given(unicode_text, st.data())
def test_segments_and_hash_round_trip_through_the_validator(raw, data):
    text = unicodedata.normalize("NFC", raw)
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(len(text) - 1, 1)), max_size=5))))
    bounds = [0, *[c for c in cuts if 0 < c < len(text)], len(text)]
    segments = [
        {"start": a, "end": b, "text": text[a:b]} for a, b in itertools.pairwise(bounds) if b > a
    ]
    doc = load("extract")
    doc["observations"][0]["text"] = text
    doc["results"][0]["text"] = {
        "text": text,
        "text_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "origin": "provider",
        "provenance": {"observation_id": "obs-x1", "source_field": "text", "transformations": []},
        "segments": segments,
    }
    assert validate_response(doc) == []
    # Breaking the hash by one character is always caught.
    doc["results"][0]["text"]["text_sha256"] = hashlib.sha256(
        (text + "x").encode("utf-8")
    ).hexdigest()
    assert [(o.pointer, o.code) for o in validate_response(doc)] == [
        ("/results/0/text/text_sha256", "text_sha256_mismatch")
    ]
