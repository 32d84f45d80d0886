"""common.kernel.text: exactly the strings no column can hold are named, by pointer."""

from hypothesis import given, settings
from hypothesis import strategies as st

from common.kernel.text import (
    all_storable,
    overlong_offenders,
    plainly_fine,
    storable,
    unstorable_offenders,
)

_clean = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
_any = st.text(alphabet=st.characters(codec=None))


def test_storable_refuses_nul_and_lone_surrogates_only():
    assert storable("Köln 東京 \U0001f600")
    assert not storable("a\x00b")
    assert not storable("\ud800")
    assert not storable("x\udfffy")


def test_offenders_name_values_and_member_names_in_pointer_order():
    value = {"a": ["ok", "bad\x00"], "k\ud800": {"deep": "\ud800"}, "fine": 1}
    found = [(o.pointer, o.code, o.detail) for o in unstorable_offenders(value, "/items/3")]
    assert found == [
        ("/items/3/a/1", "unstorable_character", "U+0000 or a lone surrogate"),
        ("/items/3/k\ud800", "unstorable_character", "in a member name"),
        ("/items/3/k\ud800/deep", "unstorable_character", "U+0000 or a lone surrogate"),
    ]


@settings(max_examples=200, derandomize=True)
@given(st.recursive(_any | st.integers() | st.none(), lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(_any, inner, max_size=3), max_leaves=10))  # fmt: skip
def test_the_fast_walk_and_the_named_offenders_always_agree(value):
    offenders = unstorable_offenders(value)
    assert all_storable(value) == (offenders == [])


@settings(max_examples=100, derandomize=True)
@given(st.lists(_clean, min_size=1, max_size=5), st.integers(0, 4))
def test_one_bad_string_among_clean_ones_is_the_only_offender(strings, index):
    index %= len(strings)
    strings[index] += "\x00"
    assert [o.pointer for o in unstorable_offenders(strings)] == [f"/{index}"]


_json = st.recursive(
    _any | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.none() | st.booleans(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_any, inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=300, derandomize=True)
@given(_json, st.integers(0, 40))
def test_the_json_filter_never_vouches_for_what_the_walks_would_name(value, max_length):
    # plainly_fine may say "not vouched for" of a clean value, never "fine" of a bad one.
    bad = unstorable_offenders(value) + overlong_offenders(value, max_length)
    if plainly_fine(value, max_length):
        assert bad == []


@settings(max_examples=200, derandomize=True)
@given(st.recursive(st.text(alphabet="abc xyz-_:/", max_size=8) | st.integers(-100, 100),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(alphabet="abc", max_size=4), inner, max_size=3),
                    max_leaves=8))  # fmt: skip
def test_the_json_filter_vouches_for_short_clean_values(value):
    # The common case never takes the walks.
    assert plainly_fine(value, 10_000)


def test_the_json_filter_on_each_kind_of_refusal():
    assert plainly_fine({"a": ["Köln", 1, None]}, 40)
    assert not plainly_fine({"a": "x\x00"}, 40)
    assert not plainly_fine({"a\ud800": "x"}, 40)
    assert not plainly_fine({"a": "y" * 41}, 40)
    assert not plainly_fine({"a": "literal \\u0000"}, 40)  # not vouched for: walks decide
    assert unstorable_offenders({"a": "literal \\u0000"}) == []
    assert plainly_fine({"a": "y" * 41}, None)
