"""Candidate links from LLM citations: what the provider parsers share.

A parser (``anthropic``, ``openai``, ``gemini``, ``crw``) turns a provider's response object, as the
client received it, into a list of `Citation` values: the answer-side span in the
registry's convention (NFC code points over the concatenated answer text,
half-open), the source-side locator and, where the provider gives one, the source
span still in the provider's unit (the passage text is needed to convert it, and
only the service has it). Parsers are pure: no Django, no I/O.

Nothing in a provider payload is trusted as an identity, verdict or state.
Titles, file names and URLs are carried as data (`Citation.title`,
`Citation.document_key`) and never become an attribution.

Offset units. Each provider's unit is declared by its parser (`SOURCE_UNIT`,
`ANSWER_UNIT`) and the conversion goes through `to_codepoint` (evidence/offsets.py)
and then `codepoint_to_nfc`, which evidence/offsets.py does not have: an offset
in the literal text is carried to the NFC text only when it falls on a
normalization boundary, never rounded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from common.kernel.refusals import Offender, pointer_join
from evidence.offsets import nfc, utf8_to_codepoint, utf16_to_codepoint

OffsetUnit = Literal["codepoint", "utf16", "utf8"]

# The selector profile every derived anchor is recorded under (ARCHITECTURE.md
# "Anchoring conventions").
SELECTOR_PROFILE = "nfc-codepoint-halfopen@1"

# FragmentSelector vocabularies. Page fragments are RFC 8118 (application/pdf
# fragment identifiers, which the W3C Web Annotation model lists for PDF). Content
# blocks have no registered fragment syntax, so ours is documented here:
# "block=<start>-<end>", 0-based, half-open, over the document's content blocks.
PDF_FRAGMENT = "http://tools.ietf.org/rfc/rfc8118"
BLOCK_FRAGMENT = "urn:grounding:fragment:content-block@1"
# The provider named a resource but no place in it. The value names the locator
# kind ("locator=url_citation"); it selects the whole resource and claims no span.
LOCATOR_FRAGMENT = "urn:grounding:fragment:citation-locator@1"
# A structured answer's field: RFC 6901 JSON pointer, in its URI fragment form.
JSON_POINTER_FRAGMENT = "http://tools.ietf.org/rfc/rfc6901"

# What a citation's `source_raw_span` indexes: the passage text as stored
# ("literal"), or crw's normalized markdown of it ("crw-markdown", see
# crw_normalize), which the service maps back to the literal text first.
SourceSpace = Literal["literal", "crw-markdown"]


@dataclass(frozen=True)
class Citation:
    """One provider citation, normalized. Spans are half-open."""

    index: int  # position among all citations of the payload, in order
    pointer: str  # JSON pointer of the citation object in the request body
    type: str  # the provider's citation type, as given
    container: dict[str, int]  # {"block_index": n} or {"output_index": n, "content_index": m}
    raw: dict[str, Any]  # the citation object as given (for the idempotency digest)
    answer_start: int = 0  # NFC code points over the concatenated answer text
    answer_end: int = 0
    document_key: str | None = None  # key into the request's `passages`
    title: str | None = None  # data only, never an attribution
    cited_text: str | None = None
    # Source side: a span still in the provider's unit (converted by the service,
    # which holds the passage text) or a ready selector for locators and fragments.
    source_raw_span: tuple[int, int] | None = None
    source_unit: OffsetUnit = "codepoint"
    source_selector: dict[str, Any] | None = None
    answer_marker: int | None = None  # a point citation (file_citation), NFC code points
    skip_reason: str | None = None  # set when the citation cannot become a link
    source_space: SourceSpace = "literal"
    # Reason recorded when `cited_text` is not the text found at the converted span.
    mismatch_reason: str = "cited_text_mismatch"
    # After registration, run the builtin resolver on the passage text (a quote
    # selector verified by containment: resolved, ambiguous or unresolved).
    resolve: bool = False
    # A provider's hash of the text it drew the source side from, and which text
    # that is ("markdown": crw's normalized markdown, checkable here; anything
    # else, e.g. "llmInput", names a text the registry does not hold).
    source_hash: str | None = None
    source_text_kind: str | None = None
    # A structured answer's field (crw-extract): the statement is the field, named
    # by this JSON pointer, not a text span; `proposition` is its claim.
    statement_pointer: str | None = None
    proposition: str | None = None
    support_kind: str | None = None  # overrides the service's default
    source_note: str | None = None  # why no source span is claimed
    # Pages named by the provider (Anthropic page_location): [start, end), 1-based.
    pages: tuple[int, int] | None = None
    # Provider data for the report (scores, confidences, statuses): never a verdict.
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Parsed:
    """A parser's result: the NFC answer text and its citations, or the offenders."""

    answer_text: str = ""
    citations: list[Citation] = field(default_factory=list)
    offenders: list[Offender] = field(default_factory=list)
    media_type: str = "text/plain"  # the answer's default media type


def to_codepoint(text: str, offset: int, unit: OffsetUnit) -> int:
    """Code-point offset in `text` of `offset` counted in `unit`; ValueError when the
    offset is outside the text or inside a character."""
    if unit == "codepoint":
        if not 0 <= offset <= len(text):
            raise ValueError(f"code point offset {offset} is outside 0..{len(text)}")
        return offset
    if unit == "utf16":
        return utf16_to_codepoint(text, offset)
    if unit == "utf8":
        return utf8_to_codepoint(text, offset)
    raise ValueError(f"unknown offset unit {unit!r}")


def codepoint_to_nfc(text: str, offset: int, *, normalized: str | None = None) -> int:
    """The offset in NFC(text) of code-point offset `offset` in the literal `text`.

    Defined only at a normalization boundary: where NFC(text[:o]) + NFC(text[o:])
    equals NFC(text). Elsewhere (between a base letter and a combining mark NFC
    composes with it) there is no corresponding NFC offset and ValueError is
    raised: a span is never silently widened or narrowed.
    """
    if not 0 <= offset <= len(text):
        raise ValueError(f"code point offset {offset} is outside 0..{len(text)}")
    whole = nfc(text) if normalized is None else normalized
    head = nfc(text[:offset])
    if head + nfc(text[offset:]) != whole:
        raise ValueError(f"offset {offset} falls inside a sequence NFC composes")
    return len(head)


def span_to_nfc(
    text: str, start: int, end: int, unit: OffsetUnit, *, normalized: str | None = None
) -> tuple[int, int]:
    """Convert a half-open span in `unit` over the literal `text` to NFC code points."""
    whole = nfc(text) if normalized is None else normalized
    return (
        codepoint_to_nfc(text, to_codepoint(text, start, unit), normalized=whole),
        codepoint_to_nfc(text, to_codepoint(text, end, unit), normalized=whole),
    )


# -- shape checks shared by the parsers: every offender, with its pointer.


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def require_int(
    obj: dict, key: str, pointer: str, offenders: list[Offender], *, minimum: int = 0
) -> int | None:
    value = obj.get(key)
    if not is_int(value):
        code = "required" if value is None else "type"
        offenders.append(Offender(pointer_join(pointer, key), code, f"{key} must be an integer."))
        return None
    if value < minimum:
        offenders.append(
            Offender(pointer_join(pointer, key), "minimum", f"{key} must be at least {minimum}.")
        )
        return None
    return value


def require_str(
    obj: dict, key: str, pointer: str, offenders: list[Offender], *, optional: bool = False
) -> str | None:
    value = obj.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or (not optional and not value):
        code = "required" if value is None else "type"
        offenders.append(
            Offender(pointer_join(pointer, key), code, f"{key} must be a non-empty string.")
        )
        return None
    return value


def require_list(obj: dict, key: str, pointer: str, offenders: list[Offender]) -> list | None:
    value = obj.get(key)
    if not isinstance(value, list):
        code = "required" if value is None else "type"
        offenders.append(Offender(pointer_join(pointer, key), code, f"{key} must be a list."))
        return None
    return value


def require_order(
    start: int | None, end: int | None, pointer: str, key: str, offenders: list[Offender]
) -> bool:
    """start <= end, reported at the end field. False when either is missing."""
    if start is None or end is None:
        return False
    if end < start:
        offenders.append(
            Offender(pointer_join(pointer, key), "range", f"{key} is before the start.")
        )
        return False
    return True


def fragment(value: str, conforms_to: str) -> dict[str, Any]:
    return {"type": "FragmentSelector", "value": value, "conformsTo": conforms_to}


def locator_selector(kind: str) -> dict[str, Any]:
    """The honest 'no span' selector: names the locator kind, selects no text."""
    return fragment(f"locator={kind}", LOCATOR_FRAGMENT)


__all__ = [
    "BLOCK_FRAGMENT",
    "JSON_POINTER_FRAGMENT",
    "LOCATOR_FRAGMENT",
    "PDF_FRAGMENT",
    "SELECTOR_PROFILE",
    "Citation",
    "OffsetUnit",
    "Parsed",
    "SourceSpace",
    "codepoint_to_nfc",
    "span_to_nfc",
    "to_codepoint",
]
