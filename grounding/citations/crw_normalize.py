"""crw's canonical markdown: its normalization, its hash, and the way back.

crw (crw-core's evidence primitives) hashes and indexes the *normalized* markdown
of a page, not the bytes it fetched. Its normalization (crw-diff's
`normalize_markdown`, which `hash_markdown` hashes) is, in order:

1. CRLF, then any remaining lone CR, become LF;
2. every line (split on LF only) loses its trailing whitespace — Rust's
   `str::trim_end`, i.e. the Unicode White_Space property, not Python's
   `str.isspace` (which also counts U+001C..U+001F);
3. a run of blank lines (empty after step 2) keeps only its first one;
4. leading and trailing blank lines are dropped; lines are joined with LF.

The hash is the lowercase hex SHA-256 of the UTF-8 bytes of that text, bare for
`Highlight.sourceHash` and prefixed `sha256:` in `EvidenceCitation.sourceHash`;
both spellings are read here. NFC is *not* part of crw's normalization: it is
applied afterwards, only to compute the registry's coordinates.

`Markdown.to_literal` carries a span of the normalized text back to the text as
stored (code points). The normalized text is a subsequence of the literal one
(an LF may stand for a CRLF pair), so every normalized character has one
literal origin; a span [a, b) maps to [origin(a).start, origin(b - 1).end):
the tightest literal span holding those characters, so whitespace crw dropped
at either edge is not claimed. Characters crw dropped *inside* the span (a
trailing space before an LF, a collapsed blank line) stay inside it. Pure: no
Django, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

# The Unicode White_Space property (what Rust's char::is_whitespace tests).
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_HASH = re.compile(r"(?:sha256:)?([0-9a-fA-F]{64})")


@dataclass(frozen=True)
class Markdown:
    """crw's normalized markdown of a literal text, with each character's origin."""

    text: str
    starts: tuple[int, ...]  # literal code-point offset where character i starts
    ends: tuple[int, ...]  # ... and where it ends (a CRLF pair is two long)

    def to_literal(self, start: int, end: int) -> tuple[int, int]:
        """The literal code-point span of the non-empty normalized span [start, end)."""
        if not 0 <= start < end <= len(self.text):
            raise ValueError(f"[{start}, {end}) is empty or outside 0..{len(self.text)}")
        return self.starts[start], self.ends[end - 1]


def _trim_end(line: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    end = len(line)
    while end and line[end - 1][0] in WHITE_SPACE:
        end -= 1
    return line[:end]


def normalize(literal: str) -> Markdown:
    """crw's normalize_markdown(literal), keeping where each character came from."""
    # Step 1, tracked: each unified character with its literal span.
    lines: list[list[tuple[str, int, int]]] = [[]]
    breaks: list[tuple[int, int]] = []  # the literal span of the LF ending lines[k]
    i, size = 0, len(literal)
    while i < size:
        char = literal[i]
        width = 2 if char == "\r" and literal.startswith("\n", i + 1) else 1
        if char in "\r\n":
            breaks.append((i, i + width))
            lines.append([])
        else:
            lines[-1].append((char, i, i + 1))
        i += width
    # Steps 2 and 3: trimmed lines, a blank run kept as its first line. A kept
    # line is followed, in the output, by the LF that ended it in the literal.
    kept: list[tuple[list[tuple[str, int, int]], tuple[int, int] | None]] = []
    blank_run = 0
    for k, line in enumerate(lines):
        trimmed = _trim_end(line)
        if trimmed:
            blank_run = 0
        else:
            blank_run += 1
            if blank_run > 1:
                continue
        kept.append((trimmed, breaks[k] if k < len(breaks) else None))
    # Step 4.
    while kept and not kept[0][0]:
        kept.pop(0)
    while kept and not kept[-1][0]:
        kept.pop()
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for n, (line, lf) in enumerate(kept):
        for char, start, end in line:
            chars.append(char)
            starts.append(start)
            ends.append(end)
        if n < len(kept) - 1 and lf is not None:
            chars.append("\n")
            starts.append(lf[0])
            ends.append(lf[1])
    return Markdown("".join(chars), tuple(starts), tuple(ends))


def normalize_text(literal: str) -> str:
    """Just the normalized text."""
    return normalize(literal).text


def hash_markdown(literal: str) -> str:
    """crw's hash_markdown: bare lowercase hex SHA-256 of the normalized text."""
    return hashlib.sha256(normalize_text(literal).encode("utf-8")).hexdigest()


def parse_hash(value: str) -> str | None:
    """The hex digest of a `sha256:<hex>` or bare `<hex>` hash; None for another form."""
    match = _HASH.fullmatch(value)
    return match.group(1).lower() if match else None
