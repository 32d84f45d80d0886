"""The reference anchor resolver: counts every match of a selector and reports them all.

Coordinates are Unicode code points over the NFC text, half-open [start, end). Zero
matches ⇒ unresolved, one ⇒ resolved, several ⇒ ambiguous; it never picks one. A
resolved anchor says only where the quote is, nothing about support. Pure functions:
no Django, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from common.kernel.canonical import text_sha256
from evidence.offsets import nfc

RESOLVER_REF = "urn:grounding:resolver:builtin@1"

Status = Literal["resolved", "ambiguous", "unresolved"]


@dataclass(frozen=True)
class Match:
    start: int
    end: int


@dataclass(frozen=True)
class Resolution:
    status: Status
    matches: tuple[Match, ...]
    text_sha256: str
    reason: str | None = None

    def as_anchor_result(self, resolver_ref: str = RESOLVER_REF) -> dict[str, Any]:
        result: dict[str, Any] = {
            "status": self.status,
            "match_count": len(self.matches),
            "matches": [{"start": m.start, "end": m.end} for m in self.matches],
            "resolver_ref": resolver_ref,
            "text_sha256": self.text_sha256,
        }
        if self.reason is not None:
            result["reason"] = self.reason
        return result


def resolve(selector: dict, text: str, *, segments: list[dict] | None = None) -> Resolution:
    """Resolve a W3C TextQuote/TextPosition selector or a WSP segment reference."""
    normalized = nfc(text)
    digest = text_sha256(normalized)
    kind = selector.get("type") if isinstance(selector, dict) else None
    if kind == "TextQuoteSelector":
        return _counted(_quote_matches(selector, normalized), digest)
    if kind == "TextPositionSelector":
        return _position(selector, normalized, digest)
    if kind == "WspSegmentSelector":
        return _segment(selector, normalized, digest, segments)
    return Resolution("unresolved", (), digest, "selector_unsupported")


def _counted(matches: tuple[Match, ...] | str, digest: str) -> Resolution:
    if isinstance(matches, str):  # a reason: the selector itself is unusable
        return Resolution("unresolved", (), digest, matches)
    if not matches:
        return Resolution("unresolved", (), digest, "no_match")
    return Resolution("resolved" if len(matches) == 1 else "ambiguous", matches, digest)


def _quote_matches(selector: dict, text: str) -> tuple[Match, ...] | str:
    exact, prefix, suffix = (selector.get(k) for k in ("exact", "prefix", "suffix"))
    if not isinstance(exact, str) or not exact:
        return "selector_invalid"
    if any(v is not None and not isinstance(v, str) for v in (prefix, suffix)):
        return "selector_invalid"
    exact, prefix, suffix = nfc(exact), nfc(prefix or ""), nfc(suffix or "")
    found: list[Match] = []
    at = text.find(exact)
    while at != -1:
        end = at + len(exact)
        if text[:at].endswith(prefix) and text.startswith(suffix, end):
            found.append(Match(at, end))
        # Step one code point, not past the match: overlapping occurrences count.
        at = text.find(exact, at + 1)
    return tuple(found)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _position(selector: dict, text: str, digest: str) -> Resolution:
    start, end = selector.get("start"), selector.get("end")
    if not (_is_int(start) and _is_int(end)):
        return Resolution("unresolved", (), digest, "selector_invalid")
    if not 0 <= start <= end <= len(text):
        return Resolution("unresolved", (), digest, "out_of_range")
    return Resolution("resolved", (Match(start, end),), digest)


def _segment(selector: dict, text: str, digest: str, segments: list[dict] | None) -> Resolution:
    index = selector.get("segment")
    if not _is_int(index):
        return Resolution("unresolved", (), digest, "selector_invalid")
    if segments is None:
        return Resolution("unresolved", (), digest, "segments_unavailable")
    if not 0 <= index < len(segments):
        return Resolution("unresolved", (), digest, "out_of_range")
    segment = segments[index]
    start, end = segment.get("start"), segment.get("end")
    if not (_is_int(start) and _is_int(end)) or not 0 <= start <= end <= len(text):
        return Resolution("unresolved", (), digest, "out_of_range")
    piece = segment.get("text")
    # A segment whose text disagrees with this representation belongs to another one.
    if isinstance(piece, str) and nfc(piece) != text[start:end]:
        return Resolution("unresolved", (), digest, "segment_mismatch")
    return Resolution("resolved", (Match(start, end),), digest)
