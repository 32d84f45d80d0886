"""Template helpers for the human-readable record views.

Source text is data: every piece of it goes through `escape`/`format_html`, and
`mark_safe` is only ever applied to markup built here around escaped text.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from common.kernel.canonical import text_sha256
from evidence.offsets import nfc

register = template.Library()


def _valid_matches(matches: Any, length: int) -> list[tuple[int, int]]:
    """(start, end) of each recorded match that fits the text, in recorded order."""
    out: list[tuple[int, int]] = []
    for match in matches if isinstance(matches, list) else []:
        if not isinstance(match, dict):
            continue
        start, end = match.get("start"), match.get("end")
        if isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= length:
            out.append((start, end))
    return out


def anchor_applies(text: str | None, anchor_result: dict | None) -> bool:
    """Whether the recorded matches were computed over this very text (NFC digest)."""
    if not text or not isinstance(anchor_result, dict):
        return False
    return anchor_result.get("text_sha256") == text_sha256(nfc(text))


@register.filter
def highlight(text: str | None, anchor_result: dict | None) -> SafeString:
    """The passage text (NFC, because offsets are NFC code points) with every recorded
    match wrapped in `<mark>`.

    Overlapping matches are all marked: the text is cut at every match boundary and
    each piece carries the 1-based indexes of all matches covering it. No match is
    ever picked over another.
    """
    if text is None:
        return mark_safe("")
    normalized = nfc(text)
    if not anchor_applies(text, anchor_result):
        return escape(normalized)
    matches = _valid_matches(anchor_result.get("matches"), len(normalized))
    if not matches:
        return escape(normalized)
    total = len(matches)
    cuts = sorted({0, len(normalized)} | {p for m in matches for p in m})
    pieces: list[str] = []
    for start, end in itertools.pairwise(cuts):
        segment = normalized[start:end]
        covering = [i for i, (s, e) in enumerate(matches, start=1) if s <= start and end <= e]
        if not covering:
            pieces.append(escape(segment))
            continue
        indexes = " ".join(str(i) for i in covering)
        label = ", ".join(f"match {i} of {total}" for i in covering)
        css = "anchor-match" + (" anchor-overlap" if len(covering) > 1 else "")
        pieces.append(
            format_html(
                '<mark class="{}" data-match="{}" title="{}">{}</mark>',
                css,
                indexes,
                label,
                segment,
            )
        )
    # Every piece above is either escaped text or format_html output.
    return mark_safe("".join(str(p) for p in pieces))


@register.filter
def excerpt_of(text: str | None, match: dict | None) -> str:
    """The NFC text a single recorded match covers (escaped by autoescape on output)."""
    if not text or not isinstance(match, dict):
        return ""
    normalized = nfc(text)
    start, end = match.get("start"), match.get("end")
    if isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(normalized):
        return normalized[start:end]
    return ""


@register.filter
def pretty_json(value: Any) -> str:
    """JSON for display in <pre>; autoescape escapes it on output."""
    if value in (None, "", {}, []):
        return "—"
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


@register.filter
def state_class(value: Any) -> str:
    """A CSS modifier for a state badge (tokens only; never arbitrary text)."""
    token = str(value or "none")
    return "badge-" + "".join(c if c.isalnum() else "-" for c in token)
