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
from typing import Any

import orjson


def canonical_json(value: Any) -> str:
    """The canonical JSON text of `value` (sorted keys, no spaces, non-ASCII kept)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_sha256(value: Any) -> str:
    """Hex sha256 of the UTF-8 bytes of `value`'s canonical JSON."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def json_text(value: Any, *, sort_keys: bool = False) -> bytes | None:
    """orjson's compact UTF-8 text of `value`, where it says what json.dumps would
    (sort_keys as json.dumps's), else None: the caller takes json.dumps.

    orjson writes NaN and infinities as null (json.dumps as NaN and Infinity, which
    JSON refuses), so a text with a null is not vouched for; it refuses what json.dumps
    takes (integers past 64 bits, non-string member names, lone surrogates) and takes
    what json.dumps refuses (datetimes, dataclasses, subclasses: handed on here).
    """
    option = _AS_JSON_DUMPS | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    try:
        text = orjson.dumps(value, option=option)
    except orjson.JSONEncodeError:
        return None
    return None if b"null" in text else text


# orjson hands these to `default` (none given: an error, so json.dumps decides).
_AS_JSON_DUMPS = (
    orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def text_sha256(text: str) -> str:
    """Hex sha256 of a text's UTF-8 bytes, with no normalization."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


__all__ = ["canonical_json", "canonical_sha256", "json_text", "text_sha256"]
