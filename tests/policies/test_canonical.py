"""One canonical JSON form and its digests (policies.kernel.canonical)."""

import unicodedata

from policies.kernel.canonical import canonical_json, canonical_sha256, text_sha256


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
