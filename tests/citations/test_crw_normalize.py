"""crw's normalized markdown (CRLF, trailing whitespace, blank runs), its hash, and
the way from a normalized span back to the literal text. Pure: no database."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grounding.citations.crw_normalize import hash_markdown, normalize, parse_hash


@pytest.mark.parametrize(
    ("literal", "expected"),
    [
        # crw-diff's own examples.
        ("# Title  \n\n\n\nbody   \n\n", "# Title\n\nbody"),
        ("a\r\nb\r\n", "a\nb"),
        # A lone CR is a line break too; CR CR LF is two breaks.
        ("a\rb\r\r\nc", "a\nb\n\nc"),
        # Two blank lines collapse to one as well; whitespace-only lines are blank.
        ("a\n \t\n\u3000\nb", "a\n\nb"),
        # Leading and trailing blank lines go; leading spaces of a line stay.
        ("\n\n  indented\n\n", "  indented"),
        # Unicode White_Space is trimmed (ideographic space, NBSP, NEL) ...
        ("x\u3000\u00a0\u0085\ny", "x\ny"),
        # ... but not U+001F, which Python's isspace() would also strip.
        ("x\x1f\ny", "x\x1f\ny"),
        # Only LF and CR break lines, not U+2028 (which is whitespace, so it is trimmed).
        ("a\u2028b\u2028\nc", "a\u2028b\nc"),
        ("", ""),
        ("\r\n\r\n", ""),
    ],
)
def test_normalization_follows_crw(literal, expected):
    assert normalize(literal).text == expected


def test_hash_is_bare_hex_sha256_of_the_normalized_text():
    assert hash_markdown("# Hello   \n\n\n\nworld  \n") == hash_markdown("# Hello\n\nworld")
    assert hash_markdown("a\r\nb") == hashlib.sha256(b"a\nb").hexdigest()


def test_both_hash_spellings_are_read_and_others_are_not():
    digest = hashlib.sha256(b"x").hexdigest()
    assert parse_hash(digest) == parse_hash(f"sha256:{digest.upper()}") == digest
    assert parse_hash(f"md5:{digest}") is None
    assert parse_hash(digest[:-1]) is None


def test_a_normalized_span_maps_to_the_tightest_literal_span():
    literal = "Zoë 🚀 line one.   \r\n\r\n\r\nline two\u3000\r\n"
    markdown = normalize(literal)
    assert markdown.text == "Zoë 🚀 line one.\n\nline two"
    start = markdown.text.index("one.")
    end = markdown.text.index("two") + 3
    lit_start, lit_end = markdown.to_literal(start, end)
    # Dropped whitespace inside the span stays inside it; none at the edges.
    assert literal[lit_start:lit_end] == "one.   \r\n\r\n\r\nline two"
    assert markdown.to_literal(0, 1) == (0, 1)
    with pytest.raises(ValueError):
        markdown.to_literal(3, 3)
    with pytest.raises(ValueError):
        markdown.to_literal(0, len(markdown.text) + 1)


TEXT = st.text(alphabet=st.sampled_from(list("ab é🚀\t\r\n\u3000\u00a0\x1f\u2028")), max_size=40)


@given(TEXT)
def test_every_normalized_character_comes_from_its_literal_origin(literal):
    markdown = normalize(literal)
    assert len(markdown.starts) == len(markdown.ends) == len(markdown.text)
    previous = 0
    for char, start, end in zip(markdown.text, markdown.starts, markdown.ends, strict=True):
        origin = literal[start:end]
        assert origin == char or (char == "\n" and origin in ("\r", "\r\n"))
        assert start >= previous  # in order, never overlapping
        previous = end
    # Normalizing is idempotent, as a hash over it must be.
    assert normalize(markdown.text).text == markdown.text
