"""Anthropic Messages responses: text content blocks and their `citations[]`.

The answer text is the concatenation, in order, of the `text` of every `text`
content block (what the SDKs show as the reply; tool-use, thinking and search
result blocks are not answer text). A citation is attached to a whole text block,
so its answer-side span is that block's position in the concatenation, converted
to NFC code points.

Source side, by citation type:
- `char_location`: [start_char_index, end_char_index) in the cited plain-text
  document. Unit: SOURCE_UNIT. Anthropic documents these as 0-based character
  indices with an exclusive end but does not name the unit; we treat them as
  Unicode code points of the document text as sent (Python `str` indices), which is
  what its own examples are consistent with. A client that knows its documents
  were indexed otherwise passes `offset_unit`. The span stays in this unit here;
  the service converts it with the passage text.
- `page_location`: pages [start_page_number, end_page_number), 1-based, end
  exclusive ⇒ an RFC 8118 PDF fragment `page=N`, or a RangeSelector between two
  of them (W3C: startSelector inclusive, endSelector exclusive) for several pages.
- `content_block_location` and `search_result_location`: blocks [start, end),
  0-based ⇒ FragmentSelector `block=<start>-<end>` (BLOCK_FRAGMENT).
- `web_search_result_location`: the provider gives no position, only `cited_text`
  (its quote of the page) ⇒ a TextQuoteSelector on that quote, or the locator-only
  fragment when the quote is empty. `encrypted_index` is opaque and ignored.

Passages are keyed by `document_index` (as a string: "0", "1", …) for document
citations, by `url` for web search results and by `source` for search results.
"""

from __future__ import annotations

from typing import Any

from common.kernel.refusals import Offender, pointer_join
from evidence.offsets import nfc
from grounding.citations import (
    BLOCK_FRAGMENT,
    PDF_FRAGMENT,
    Citation,
    OffsetUnit,
    Parsed,
    codepoint_to_nfc,
    fragment,
    locator_selector,
    require_int,
    require_list,
    require_order,
    require_str,
)

FORMAT = "anthropic-messages"
# The unit of start_char_index / end_char_index (see the module docstring).
SOURCE_UNIT: OffsetUnit = "codepoint"

SUPPORTED_TYPES = (
    "char_location",
    "page_location",
    "content_block_location",
    "web_search_result_location",
    "search_result_location",
)


def parse(
    payload: Any, *, pointer: str = "/payload", offset_unit: OffsetUnit | None = None
) -> Parsed:
    """Normalize an Anthropic Messages response; offenders for a malformed shape."""
    result = Parsed()
    offenders = result.offenders
    if not isinstance(payload, dict):
        offenders.append(Offender(pointer or "/", "type", "the payload must be an object."))
        return result
    if payload.get("type", "message") != "message":
        offenders.append(Offender(pointer_join(pointer, "type"), "enum", "type must be message."))
    if payload.get("role", "assistant") != "assistant":
        offenders.append(Offender(pointer_join(pointer, "role"), "enum", "role must be assistant."))
    blocks = require_list(payload, "content", pointer, offenders)
    if blocks is None:
        return result

    # First pass: the answer text and each text block's literal span in it.
    pieces: list[str] = []
    spans: dict[int, tuple[int, int]] = {}
    at = 0
    for i, block in enumerate(blocks):
        where = pointer_join(pointer, "content", i)
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            offenders.append(Offender(where, "type", "a content block is an object with a type."))
            continue
        if block["type"] != "text":
            continue
        text = block.get("text")
        if not isinstance(text, str):
            code = "required" if text is None else "type"
            offenders.append(Offender(pointer_join(where, "text"), code, "text must be a string."))
            continue
        pieces.append(text)
        spans[i] = (at, at + len(text))
        at += len(text)
    literal = "".join(pieces)
    result.answer_text = nfc(literal)

    unit = offset_unit or SOURCE_UNIT
    index = 0
    for i, (raw_start, raw_end) in spans.items():
        block = blocks[i]
        where = pointer_join(pointer, "content", i)
        citations = block.get("citations")
        if citations is None:
            continue
        if not isinstance(citations, list):
            offenders.append(
                Offender(pointer_join(where, "citations"), "type", "citations must be a list.")
            )
            continue
        try:
            start = codepoint_to_nfc(literal, raw_start, normalized=result.answer_text)
            end = codepoint_to_nfc(literal, raw_end, normalized=result.answer_text)
            span_reason = "empty_answer_span" if start == end else None
        except ValueError:
            start = end = 0
            span_reason = "answer_span_not_convertible"
        for j, item in enumerate(citations):
            cited = pointer_join(where, "citations", j)
            fields = _citation(item, cited, offenders, unit=unit)
            if fields is None:
                continue
            if span_reason:
                fields.setdefault("skip_reason", span_reason)
            result.citations.append(
                Citation(
                    index=index,
                    pointer=cited,
                    container={"block_index": i},
                    raw=item,
                    answer_start=start,
                    answer_end=end,
                    **fields,
                )
            )
            index += 1
    return result


def _citation(
    item: Any, pointer: str, offenders: list[Offender], *, unit: OffsetUnit
) -> dict[str, Any] | None:
    """The type-specific fields of one citation, or None when it is malformed."""
    if not isinstance(item, dict):
        offenders.append(Offender(pointer, "type", "a citation must be an object."))
        return None
    kind = require_str(item, "type", pointer, offenders)
    if kind is None:
        return None
    before = len(offenders)
    common: dict[str, Any] = {"type": kind, "source_unit": unit}
    if kind not in SUPPORTED_TYPES:
        # A type this importer does not know is reported, not refused: providers add
        # citation kinds, and the other citations of the answer are still good.
        return {**common, "skip_reason": "unsupported_citation_type"}
    common["cited_text"] = require_str(item, "cited_text", pointer, offenders, optional=True)
    if kind in ("char_location", "page_location", "content_block_location"):
        document = require_int(item, "document_index", pointer, offenders)
        common["document_key"] = None if document is None else str(document)
        common["title"] = require_str(item, "document_title", pointer, offenders, optional=True)
    if kind == "char_location":
        start = require_int(item, "start_char_index", pointer, offenders)
        end = require_int(item, "end_char_index", pointer, offenders)
        if require_order(start, end, pointer, "end_char_index", offenders):
            common["source_raw_span"] = (start, end)
    elif kind == "page_location":
        start = require_int(item, "start_page_number", pointer, offenders, minimum=1)
        end = require_int(item, "end_page_number", pointer, offenders, minimum=1)
        if _require_nonempty(start, end, pointer, "end_page_number", offenders):
            common["source_selector"] = _pages(start, end)
            common["pages"] = (start, end)
    elif kind == "content_block_location":
        common["source_selector"] = _blocks(item, pointer, offenders)
    elif kind == "web_search_result_location":
        common["document_key"] = require_str(item, "url", pointer, offenders)
        common["title"] = require_str(item, "title", pointer, offenders, optional=True)
        quote = common["cited_text"]
        common["source_selector"] = (
            {"type": "TextQuoteSelector", "exact": nfc(quote)} if quote else locator_selector(kind)
        )
    elif kind == "search_result_location":
        common["document_key"] = require_str(item, "source", pointer, offenders)
        common["title"] = require_str(item, "title", pointer, offenders, optional=True)
        require_int(item, "search_result_index", pointer, offenders)
        common["source_selector"] = _blocks(item, pointer, offenders)
    return common if len(offenders) == before else None


def _require_nonempty(
    start: int | None, end: int | None, pointer: str, key: str, offenders: list[Offender]
) -> bool:
    if start is None or end is None:
        return False
    if end <= start:
        offenders.append(
            Offender(pointer_join(pointer, key), "range", f"{key} must be after the start.")
        )
        return False
    return True


def _pages(start: int, end: int) -> dict[str, Any]:
    if end - start == 1:
        return fragment(f"page={start}", PDF_FRAGMENT)
    return {
        "type": "RangeSelector",
        "startSelector": fragment(f"page={start}", PDF_FRAGMENT),
        "endSelector": fragment(f"page={end}", PDF_FRAGMENT),
    }


def _blocks(item: dict, pointer: str, offenders: list[Offender]) -> dict[str, Any] | None:
    start = require_int(item, "start_block_index", pointer, offenders)
    end = require_int(item, "end_block_index", pointer, offenders)
    if not _require_nonempty(start, end, pointer, "end_block_index", offenders):
        return None
    return fragment(f"block={start}-{end}", BLOCK_FRAGMENT)
