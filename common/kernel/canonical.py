"""Canonical JSON and the sha256 digests the apps store and compare.

One canonical form for JSON values: keys sorted, compact separators, non-ASCII
characters kept as they are, UTF-8. Every digest "of a document" (WSP documents as
received, from-citations requests and keys, native projections, JSON exports) is
`canonical_sha256` of it, so two places that digest the same value agree.

A text digest is another thing: the sha256 of a string's UTF-8 bytes exactly as it
stands (Content keys, WSP `text_sha256`). Callers that digest normalized text (the
anchoring's NFC digest) normalize before calling `text_sha256`.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import orjson


def canonical_json(value: Any) -> str:
    """The canonical JSON text of `value` (sorted keys, no spaces, non-ASCII kept)."""
    return canonical_bytes(value).decode("utf-8")


def canonical_bytes(value: Any) -> bytes:
    """`canonical_json(value)` as UTF-8 bytes: json.dumps's text, written by orjson
    (a tenth of the time for a WSP document) wherever orjson's is byte for byte the
    same (`json_text`, with floats spelled as json.dumps spells them)."""
    text = json_text(value, sort_keys=True)
    if text is None or _floats_differ(text):
        return _CANONICAL.encode(value).encode("utf-8")
    return text


def canonical_sha256(value: Any) -> str:
    """Hex sha256 of the UTF-8 bytes of `value`'s canonical JSON."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def json_text(value: Any, *, sort_keys: bool = False) -> bytes | None:
    """orjson's compact UTF-8 text of `value`, where it holds the JSON value json.dumps's
    text would (keys sorted as json.dumps's if `sort_keys`), else None: the caller
    takes json.dumps. The texts are the same but for some floats' spelling (1e-05 is
    0.00001 to orjson).

    orjson writes NaN and infinities as null (json.dumps as NaN and Infinity, which
    JSON refuses), so a text with a null is vouched for only when it reads back as
    the value; it refuses what json.dumps takes (integers past 64 bits, non-string
    member names, lone surrogates) and takes what json.dumps refuses (datetimes,
    dataclasses, subclasses: handed on here, so refused).
    """
    option = _AS_JSON_DUMPS | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    try:
        text = orjson.dumps(value, option=option)
    except orjson.JSONEncodeError:
        return None
    if b"null" in text and orjson.loads(text) != value:
        return None
    return text


# Where orjson and json.dumps spell a float differently: json.dumps writes an exponent
# below 1e-4 with two digits at least (1e-05, 2.5e-08), orjson no exponent down to
# 1e-5 (0.00001) and one digit below (2.5e-8). Every other float they spell alike
# (`test_canonical.py` holds it over random doubles). Found anywhere in the text (a
# string may hold the same characters), json.dumps writes it instead.
_SHORT_EXPONENT = re.compile(rb"e-[0-9](?![0-9])")


def _floats_differ(text: bytes) -> bool:
    return b"0.0000" in text or (b"e-" in text and _SHORT_EXPONENT.search(text) is not None)


# orjson hands these to `default` (none given: an error, so json.dumps decides).
_AS_JSON_DUMPS = (
    orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def text_sha256(text: str) -> str:
    """Hex sha256 of a text's UTF-8 bytes, with no normalization."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


__all__ = ["canonical_bytes", "canonical_json", "canonical_sha256", "json_text", "text_sha256"]
