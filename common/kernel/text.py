"""Text no database column can hold: U+0000 and unpaired surrogates.

JSON admits "\\u0000" and lone surrogate escapes; PostgreSQL text and jsonb and
UTF-8 do not. Input carrying them is refused with a pointer to each string, before
anything is written, instead of failing (or silently altering the text) at write
time.
"""

from __future__ import annotations

from typing import Any

import orjson

from common.kernel.refusals import Offender, pointer_join

CODE = "unstorable_character"


def storable(text: str) -> bool:
    """Whether a string can be stored: valid UTF-8 (no lone surrogate) and no U+0000."""
    if "\x00" in text:
        return False
    if text.isascii():
        return True  # no surrogate possible; skips encoding the common case
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def plausible_ref(value: Any, max_length: int) -> bool:
    """Whether `value` can go into an audit column of `max_length` as it is: audit rows
    carry plausible identifiers from refused input, never arbitrary input."""
    return isinstance(value, str) and 0 < len(value) <= max_length and storable(value)


def all_storable(value: Any) -> bool:
    """True when every string in `value` (member names included) is storable.

    The fast path: one walk that builds no pointers; only a value it cannot vouch
    for goes through `unstorable_offenders`, which names them.
    """
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, child in node.items():
                if isinstance(key, str) and not storable(key):
                    return False
                stack.append(child)
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str) and not storable(node):
            return False
    return True


def plainly_fine(value: Any, max_length: int | None) -> bool:
    """A fast filter for `unstorable_offenders` and `overlong_offenders`: True only when
    neither can find anything in `value`, judged from its JSON text in one C pass.

    orjson refuses a lone surrogate and escapes U+0000 as `\\u0000`; no string in the
    value is longer (in characters) than the text is in bytes. False means "not
    vouched for" (a literal backslash-u0000, a long text, a value JSON cannot hold),
    and the walks decide.
    """
    try:
        text = orjson.dumps(value)
    except (orjson.JSONEncodeError, RecursionError):
        return False
    return b"\\u0000" not in text and (max_length is None or len(text) <= max_length)


def unstorable_offenders(value: Any, pointer: str = "") -> list[Offender]:
    """One offender per unstorable string (or member name) in `value`, by pointer."""
    if all_storable(value):
        return []
    found: list[Offender] = []
    stack: list[tuple[str, Any]] = [(pointer, value)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            for key, child in node.items():
                at = pointer_join(where, key)
                if isinstance(key, str) and not storable(key):
                    found.append(Offender(at, CODE, "in a member name"))
                stack.append((at, child))
        elif isinstance(node, list):
            stack.extend((pointer_join(where, i), item) for i, item in enumerate(node))
        elif isinstance(node, str) and not storable(node):
            found.append(Offender(where, CODE, "U+0000 or a lone surrogate"))
    return sorted(found, key=lambda o: o.pointer)


def overlong_offenders(value: Any, max_length: int, pointer: str = "") -> list[Offender]:
    """One offender per string (or member name) in `value` longer than `max_length`.

    Iterative like `unstorable_offenders`; the offender names the limit, never the text.
    """
    found: list[Offender] = []
    detail = f"longer than {max_length} characters"
    stack: list[tuple[str, Any]] = [(pointer, value)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, str):
            if len(node) > max_length:
                found.append(Offender(where, "max_length", detail))
        elif isinstance(node, dict):
            for key, child in node.items():
                at = pointer_join(where, key)
                if isinstance(key, str) and len(key) > max_length:
                    found.append(Offender(at, "max_length", f"a member name {detail}"))
                if isinstance(child, str | dict | list):
                    stack.append((at, child))
        elif isinstance(node, list):
            stack.extend(
                (pointer_join(where, i), item)
                for i, item in enumerate(node)
                if isinstance(item, str | dict | list)
            )
    return sorted(found, key=lambda o: o.pointer)


# `storable` as a JSON Schema pattern: no U+0000. (A lone surrogate is no Unicode
# scalar value: the API takes I-JSON, RFC 7493, which has none, as docs/api.md says;
# no portable pattern can name one, and Rust and ECMA-262 engines refuse the range.)
STORABLE = "^[^\\u0000]*$"
# The same, and not blank once trimmed (a CharField that trims white space and does
# not allow blank refuses "  " as blank).
# U+001C-U+001F and U+0085 are white space to Python (str.strip, `\\s`), not to
# ECMA-262's `\\s`: named.
STORABLE_NOT_BLANK = "^[^\\u0000]*[^\\s\\u001C-\\u001F\\u0085\\u0000][^\\u0000]*$"
# `control_offenders`' rule as a JSON Schema pattern (the OpenAPI description of such
# a ref): some non-blank text, no control character or U+0000, and no "." or ".."
# path segment.
PATH_SEGMENT_REF = (
    "^(?=.*[^\\s\\u0085])(?!\\.\\.?(/|$))(?!.*/\\.\\.?(/|$))[^\\u0000-\\u001F\\u007F-\\u009F]+$"
)


def control_offenders(value: Any, pointer: str) -> list[Offender]:
    """A reference used in a URL path: no control characters, no dot segments.

    `a/../b` would name another reference once a client or proxy normalizes the path
    (and `Location` would point there), so such refs are refused, not stored.
    """
    if not isinstance(value, str):
        return []
    if any(ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in value) or not storable(value):
        return [Offender(pointer, "control_character", "control characters are not allowed")]
    if any(segment in (".", "..") for segment in value.split("/")):
        return [Offender(pointer, "dot_segment", "'.' and '..' path segments are not allowed")]
    return []
