"""One canonical JSON form and its digests (common.kernel.canonical)."""

import hashlib
import json
import math
import random
import struct
import unicodedata

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from common.kernel.canonical import (
    canonical_bytes,
    canonical_json,
    canonical_sha256,
    json_text,
    text_sha256,
)


def test_canonical_json_sorts_keys_at_every_depth_compact_and_keeps_non_ascii():
    value = {"b": [1, {"d": None, "c": True}], "a": "é"}

    assert canonical_json(value) == '{"a":"é","b":[1,{"c":true,"d":null}]}'


def test_canonical_sha256_is_the_digest_of_the_canonical_utf8_bytes():
    assert (
        canonical_sha256({"b": [1, {"c": None}], "a": "é"})
        == "e4b07c4cca546f3fcaf7f1baf600dbd4d4d4376734bf21f7928f517ead24cef5"
    )


def test_canonical_sha256_does_not_depend_on_key_order():
    assert canonical_sha256({"x": 1, "y": {"q": 2, "p": 3}}) == canonical_sha256(
        {"y": {"p": 3, "q": 2}, "x": 1}
    )


def test_text_sha256_digests_the_text_as_it_stands():
    composed = "Café"
    decomposed = unicodedata.normalize("NFD", composed)

    assert text_sha256(composed) == (
        "73473dcc12b763085904a5279d048c4d5b3b008c46f1f32443b99de04aa83a14"
    )
    assert text_sha256("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    # No normalization: the NFD spelling is other bytes, so another digest.
    assert text_sha256(decomposed) != text_sha256(composed)


def test_text_sha256_of_a_string_is_not_the_canonical_sha256_of_it():
    # canonical JSON of a string carries its quotes.
    assert canonical_sha256("Café") == text_sha256('"Café"')
    assert canonical_sha256("Café") != text_sha256("Café")


def _dumps(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats()
    | st.text(st.characters(codec="utf-8")) | st.sampled_from([1e-5, 2.5e-8, 1e-4, 1e16]),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(st.characters(codec="utf-8"), max_size=4), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip


@settings(max_examples=600, derandomize=True)
@given(_json)
def test_the_canonical_text_is_json_dumps_text_byte_for_byte(value):
    # NaN, infinities, huge integers and control characters included.
    assert canonical_json(value) == _dumps(value)
    assert canonical_bytes(value) == _dumps(value).encode("utf-8")
    assert canonical_sha256(value) == hashlib.sha256(_dumps(value).encode()).hexdigest()


@settings(max_examples=300, derandomize=True)
@given(_json)
def test_json_text_holds_the_value_json_dumps_writes_or_declines(value):
    text = json_text(value)
    if any(isinstance(v, float) and not math.isfinite(v) for v in _leaves(value)):
        assert text is None  # orjson would write null: json.dumps decides
    elif text is not None:
        assert orjson.loads(text) == json.loads(json.dumps(value))


def _leaves(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def test_every_double_is_spelled_as_json_dumps_spells_it():
    rng = random.Random(16)
    for _ in range(50_000):
        bits = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        scaled = rng.uniform(-10, 10) * 10.0 ** rng.randint(-30, 30)
        for x in (bits, scaled):
            assert canonical_json([x, {"k": x}]) == _dumps([x, {"k": x}])


def test_a_string_that_looks_like_a_short_float_is_still_exact():
    value = {"note": "see 1e-5 and 0.00001", "x": 0.5}
    assert canonical_json(value) == _dumps(value)
