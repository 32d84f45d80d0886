"""The transformation definitions this registry pins down (evidence/wsp/text_rules.py)."""

import pytest

from evidence.wsp.text_rules import derives_from, whitespace_norm

IMAGE = "data:image/png;base64,iVBORw0KGgo="


def test_whitespace_norm_collapses_unicode_whitespace_runs_and_strips():
    assert whitespace_norm("\u3000 a\t\n b\u00a0\u2003c  ") == "a b c"


@pytest.mark.parametrize(
    ("projected", "source", "transformations", "derives"),
    [
        ("abc", "abc", [], True),
        ("abc", "abd", [], False),
        ("a b", "a  b", [], False),
        ("a b", " a \n b ", ["whitespace_norm"], True),
        ("ab", "a b", ["whitespace_norm"], False),
        ("abc", "abcdef", ["deterministic_truncation"], True),
        ("abcdef", "abcdef", ["deterministic_truncation"], True),
        ("bcd", "abcdef", ["deterministic_truncation"], False),
        ("a b c", "a  b  c  d", ["deterministic_truncation", "whitespace_norm"], True),
        ("abc", "abc", ["mechanical_segmentation"], True),
        ("see [image] here", f"see {IMAGE} here", ["image_base64_replace"], True),
        ("see  here", f"see {IMAGE} here", ["image_base64_replace"], True),
        ("saw [image] here", f"see {IMAGE} here", ["image_base64_replace"], False),
        (f"see {IMAGE} here", f"see {IMAGE} here", ["image_base64_replace"], False),
        (
            "see [img] here",
            f"see  {IMAGE}\n here",
            ["image_base64_replace", "whitespace_norm"],
            True,
        ),
        (
            "see [img] he",
            f"see {IMAGE} here",
            ["image_base64_replace", "deterministic_truncation"],
            True,
        ),
        ("see [i", f"see {IMAGE} here", ["image_base64_replace", "deterministic_truncation"], True),
        ("see [img] here", f"see {IMAGE} here", [], False),
    ],
)
def test_derives_from_applies_exactly_the_listed_transformations(
    projected, source, transformations, derives
):
    assert derives_from(projected, source, transformations) is derives
