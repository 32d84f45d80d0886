"""The source side of a citation: the selector, and what can be checked about it
with the passage text this registry holds. Never retargets a provider location.

- A span in the passage's literal text (Anthropic `char_location`): converted to
  NFC code points; `cited_text` is compared with the text found there.
- A span in crw's normalized markdown (`crw-search` highlights): converted from
  the declared unit to code points of that markdown, carried back to the literal
  text (crw_normalize.Markdown.to_literal), then to NFC code points; the
  highlight's `text` is compared with the markdown at the span (the text crw
  indexed). A `sourceHash` that does not match the passage's normalized markdown
  means the offsets index another text: they are not converted, the anchor is
  the highlight's quote alone and is recorded unresolved (`source_hash_mismatch`).
- A quote to verify by containment (`crw-extract` supported): the builtin
  resolver runs on the passage text after registration, unless the citation's
  `sourceHash` covers text held here (`markdown`) and does not match, which is
  recorded unresolved (`source_hash_mismatch`). A hash over text not held here
  (`llmInput`) is recorded as the anchor's `transformation_ref` (when it is a
  well-formed sha256) and not checked.
- Otherwise the parser's selector (locators, fragments) as given: no check.

With an external passage (no local text) nothing is checked: code-point offsets
are recorded as given with a note, other units skip (`source_offset_not_convertible`).
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

from evidence.offsets import nfc
from grounding.citations import Citation, span_to_nfc, to_codepoint
from grounding.citations import crw_normalize as crw

if TYPE_CHECKING:
    from grounding.services.citations.plan import Plan

CHECK_RESOLVER_REF = "urn:grounding:resolver:citation-check@1"
NOT_HELD = "passage text not held here; provider offsets recorded unverified"
TRANSFORMATION_PREFIX = "urn:crw:source-text:"
_TEXT_KIND = re.compile(r"[A-Za-z][A-Za-z0-9]{0,31}")


def locate(plan: Plan, c: Citation, text: str | None) -> dict[str, Any] | None:
    """The source selector (None: `plan.skip` says why, or nothing locates it)."""
    if c.source_raw_span is not None and c.source_space == "crw-markdown":
        return _crw_span(plan, c, text)
    if c.source_raw_span is not None:
        return _literal_span(plan, c, text)
    if c.resolve:
        _containment(plan, c, text)
    return c.source_selector


def _observation(text: str, *, span: tuple[int, int] | None, reason: str) -> dict[str, Any]:
    """A citation-check observation: the one match at `span`, or unresolved."""
    observation: dict[str, Any] = {
        "resolver_ref": CHECK_RESOLVER_REF,
        "text_sha256": hashlib.sha256(nfc(text).encode("utf-8")).hexdigest(),
    }
    if span is not None:
        observation.update(
            status="resolved", match_count=1, matches=[{"start": span[0], "end": span[1]}]
        )
    else:
        # Recorded as found; the selector keeps the provider's location.
        observation.update(status="unresolved", match_count=0, matches=[], reason=reason)
    return observation


def _literal_span(plan: Plan, c: Citation, text: str | None) -> dict[str, Any] | None:
    """The source TextPositionSelector in NFC code points, and its cited_text check."""
    start, end = c.source_raw_span
    if text is None:
        if c.source_unit != "codepoint":
            plan.skip = "source_offset_not_convertible"
            return None
        plan.source_note = NOT_HELD
        plan.source_span = {"start": start, "end": end}
        return {"type": "TextPositionSelector", "start": start, "end": end}
    normalized = nfc(text)
    try:
        start, end = span_to_nfc(text, start, end, c.source_unit, normalized=normalized)
    except ValueError:
        plan.skip = "source_offset_not_convertible"
        return None
    plan.source_span = {"start": start, "end": end}
    if c.cited_text is not None:
        found = normalized[start:end] == nfc(c.cited_text)
        plan.observation = _observation(
            text, span=(start, end) if found else None, reason=c.mismatch_reason
        )
    return {"type": "TextPositionSelector", "start": start, "end": end}


def _quote(c: Citation) -> dict[str, Any] | None:
    return {"type": "TextQuoteSelector", "exact": nfc(c.cited_text)} if c.cited_text else None


def _with_quote(selector: dict[str, Any], quote: dict[str, Any] | None) -> dict[str, Any]:
    # W3C refinedBy: the quote, found within the span (the span's whole text when
    # the provider's offsets and text agree).
    return {**selector, "refinedBy": quote} if quote else selector


def _crw_span(plan: Plan, c: Citation, text: str | None) -> dict[str, Any] | None:
    start, end = c.source_raw_span
    quote = _quote(c)
    if text is None:
        if c.source_unit != "codepoint":
            plan.skip = "source_offset_not_convertible"
            return None
        plan.source_note = "passage text not held here; crw offsets recorded unverified"
        plan.source_span = {"start": start, "end": end}
        return _with_quote({"type": "TextPositionSelector", "start": start, "end": end}, quote)
    markdown = crw.normalize(text)
    if c.source_hash is not None:
        plan.hash_check = _hash_check(c.source_hash, markdown.text)
        if plan.hash_check == "mismatch":
            plan.source_note = "sourceHash is not the passage's normalized markdown; not converted"
            plan.observation = _observation(text, span=None, reason="source_hash_mismatch")
            if quote is None:
                plan.skip = "source_hash_mismatch"
            return quote
    try:
        md_start = to_codepoint(markdown.text, start, c.source_unit)
        md_end = to_codepoint(markdown.text, end, c.source_unit)
        literal = markdown.to_literal(md_start, md_end)
        span = span_to_nfc(text, *literal, "codepoint")
    except ValueError:
        plan.skip = "source_offset_not_convertible"
        return None
    plan.source_span = {"start": span[0], "end": span[1]}
    if c.cited_text is not None:
        found = nfc(markdown.text[md_start:md_end]) == nfc(c.cited_text)
        plan.observation = _observation(
            text, span=span if found else None, reason=c.mismatch_reason
        )
    return _with_quote({"type": "TextPositionSelector", "start": span[0], "end": span[1]}, quote)


def _hash_check(given: str, markdown: str) -> str:
    digest = crw.parse_hash(given)
    if digest is None:
        return "unrecognized"
    actual = hashlib.sha256(markdown.encode("utf-8")).hexdigest()
    return "match" if digest == actual else "mismatch"


def _containment(plan: Plan, c: Citation, text: str | None) -> None:
    """A quote verified by containment in the passage text, after registration."""
    kind = c.source_text_kind
    digest = crw.parse_hash(c.source_hash) if c.source_hash is not None else None
    if kind != "markdown" and digest is not None and _TEXT_KIND.fullmatch(kind or ""):
        # The text this hash covers is not held here: recorded, not checked.
        plan.transformation_ref = f"{TRANSFORMATION_PREFIX}{kind}:sha256:{digest}"
    if text is None:
        plan.hash_check = "no_local_text" if c.source_hash is not None else None
        plan.source_note = "passage text not held here; excerpt not verified"
        return
    if c.source_hash is None:
        plan.run_resolver = True
        return
    if kind != "markdown":
        plan.hash_check = "not_held"
        plan.source_note = f"sourceHash covers {kind} text not held here; containment only"
        plan.run_resolver = True
        return
    plan.hash_check = _hash_check(c.source_hash, crw.normalize_text(text))
    if plan.hash_check == "mismatch":
        plan.source_note = "sourceHash is not the passage's normalized markdown; not resolved"
        plan.observation = _observation(text, span=None, reason="source_hash_mismatch")
    else:
        plan.run_resolver = True
