"""Offsets in one text: Unicode code points, UTF-16 code units and UTF-8 bytes.

Anchors are recorded in code points over NFC text (WSP M0 convention); browsers and
JavaScript count UTF-16 code units, databases and files count UTF-8 bytes. Each
converter refuses an offset that falls inside a character (between the two halves of
a surrogate pair, inside a multibyte sequence) or outside the text with ValueError.
"""

from __future__ import annotations

import unicodedata


def nfc(text: str) -> str:
    """The NFC normalization coordinates are computed over (stored text is never changed)."""
    return unicodedata.normalize("NFC", text)


def _utf16_units(char: str) -> int:
    return 2 if ord(char) > 0xFFFF else 1


def _utf8_bytes(char: str) -> int:
    code = ord(char)
    if code < 0x80:
        return 1
    if code < 0x800:
        return 2
    if code < 0x10000:
        return 3
    return 4


def _check_codepoint(text: str, offset: int) -> None:
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise TypeError("an offset is an int")
    if not 0 <= offset <= len(text):
        raise ValueError(f"code point offset {offset} is outside 0..{len(text)}")


def codepoint_to_utf16(text: str, offset: int) -> int:
    """UTF-16 code-unit offset of code-point offset `offset` in `text`."""
    _check_codepoint(text, offset)
    return offset + sum(1 for char in text[:offset] if ord(char) > 0xFFFF)


def codepoint_to_utf8(text: str, offset: int) -> int:
    """UTF-8 byte offset of code-point offset `offset` in `text`."""
    _check_codepoint(text, offset)
    return len(text[:offset].encode("utf-8", "surrogatepass"))


def utf16_to_codepoint(text: str, offset: int) -> int:
    """Code-point offset of UTF-16 code-unit offset `offset`; ValueError inside a pair."""
    return _to_codepoint(text, offset, _utf16_units, "a surrogate pair")


def utf8_to_codepoint(text: str, offset: int) -> int:
    """Code-point offset of UTF-8 byte offset `offset`; ValueError inside a sequence."""
    return _to_codepoint(text, offset, _utf8_bytes, "a multibyte sequence")


def _to_codepoint(text: str, offset: int, width, inside: str) -> int:
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise TypeError("an offset is an int")
    if offset < 0:
        raise ValueError(f"offset {offset} is negative")
    units = 0
    for index, char in enumerate(text):
        if units == offset:
            return index
        units += width(char)
        if units > offset:
            raise ValueError(f"offset {offset} falls inside {inside}")
    if units == offset:
        return len(text)
    raise ValueError(f"offset {offset} is past the end ({units})")
