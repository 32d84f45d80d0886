"""OpenAI Responses: `output_text` content of `message` output items and their
`annotations[]`.

The answer text is the concatenation, in order, of the `text` of every
`output_text` part of every `message` output item: what the SDKs expose as
`response.output_text`. Other output items (web_search_call, file_search_call,
reasoning, function calls) and `refusal` parts are not answer text.

Here the span is on the answer side and the source side is only a locator:
- `url_citation`: [start_index, end_index) into the part's `text`; the source is
  `url` (its `title` is data). Note that the span the provider marks is often
  the inline citation itself (a markdown link) rather than the sentence; it is
  recorded as given, not "improved".
- `file_citation`: one position `index` into the part's `text` (where the
  citation marker sits); the source is `file_id` (`filename` is data). A point
  selects no statement text, so the statement is the whole `output_text` part
  and the point is kept as a zero-width `refinedBy` position relative to it.

Unit of start_index / end_index / index: ANSWER_UNIT. OpenAI documents them as
indices into the text without naming the unit. We treat them as Unicode code
points (Python `str` indices, the service's and the Python SDK's own string
model), not UTF-16 code units; a client that knows otherwise passes
`offset_unit`, and an offset inside a surrogate pair or past the text is
refused with a pointer rather than rounded.

The source selector cannot locate a span, so it is the locator-only fragment
(`locator=url_citation` / `locator=file_citation`), which claims no text span;
the anchor stays unattempted. Passages are keyed by `url` and by `file_id`.
"""

from __future__ import annotations

from typing import Any

from common.kernel.refusals import Offender, pointer_join
from evidence.offsets import nfc
from grounding.citations import (
    Citation,
    OffsetUnit,
    Parsed,
    codepoint_to_nfc,
    locator_selector,
    require_int,
    require_list,
    require_order,
    require_str,
    to_codepoint,
)

FORMAT = "openai-responses"
# The unit of start_index / end_index / index (see the module docstring).
ANSWER_UNIT: OffsetUnit = "codepoint"

SUPPORTED_TYPES = ("url_citation", "file_citation")


def parse(
    payload: Any, *, pointer: str = "/payload", offset_unit: OffsetUnit | None = None
) -> Parsed:
    """Normalize an OpenAI Responses object; offenders for a malformed shape."""
    result = Parsed()
    offenders = result.offenders
    if not isinstance(payload, dict):
        offenders.append(Offender(pointer or "/", "type", "the payload must be an object."))
        return result
    if payload.get("object", "response") != "response":
        offenders.append(
            Offender(pointer_join(pointer, "object"), "enum", "object must be response.")
        )
    items = require_list(payload, "output", pointer, offenders)
    if items is None:
        return result

    # First pass: every output_text part, its literal span in the answer text.
    parts: list[tuple[int, int, str, dict, int]] = []  # output, content, pointer, part, start
    pieces: list[str] = []
    at = 0
    for i, item in enumerate(items):
        where = pointer_join(pointer, "output", i)
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            offenders.append(Offender(where, "type", "an output item is an object with a type."))
            continue
        if item["type"] != "message":
            continue
        if item.get("role", "assistant") != "assistant":
            continue
        content = require_list(item, "content", where, offenders)
        for j, part in enumerate(content or []):
            at_part = pointer_join(where, "content", j)
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                offenders.append(Offender(at_part, "type", "a content part has a type."))
                continue
            if part["type"] != "output_text":
                continue
            text = part.get("text")
            if not isinstance(text, str):
                code = "required" if text is None else "type"
                offenders.append(
                    Offender(pointer_join(at_part, "text"), code, "text must be a string.")
                )
                continue
            parts.append((i, j, at_part, part, at))
            pieces.append(text)
            at += len(text)
    literal = "".join(pieces)
    result.answer_text = nfc(literal)

    unit = offset_unit or ANSWER_UNIT
    index = 0
    for output_index, content_index, where, part, base in parts:
        annotations = part.get("annotations")
        if annotations is None:
            continue
        if not isinstance(annotations, list):
            offenders.append(
                Offender(pointer_join(where, "annotations"), "type", "annotations is a list.")
            )
            continue
        for k, item in enumerate(annotations):
            at_item = pointer_join(where, "annotations", k)
            fields = _annotation(
                item, at_item, offenders, text=part["text"], base=base, literal=literal,
                normalized=result.answer_text, unit=unit,
            )  # fmt: skip
            if fields is None:
                continue
            result.citations.append(
                Citation(
                    index=index,
                    pointer=at_item,
                    container={"output_index": output_index, "content_index": content_index},
                    raw=item,
                    **fields,
                )
            )
            index += 1
    return result


def _annotation(
    item: Any,
    pointer: str,
    offenders: list[Offender],
    *,
    text: str,
    base: int,
    literal: str,
    normalized: str,
    unit: OffsetUnit,
) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        offenders.append(Offender(pointer, "type", "an annotation must be an object."))
        return None
    kind = require_str(item, "type", pointer, offenders)
    if kind is None:
        return None
    if kind not in SUPPORTED_TYPES:
        # Reported per citation, not refused: the provider adds annotation kinds
        # (file_path, container_file_citation) and the others are still good.
        return {"type": kind, "skip_reason": "unsupported_citation_type"}
    before = len(offenders)
    fields: dict[str, Any] = {"type": kind, "source_selector": locator_selector(kind)}
    if kind == "url_citation":
        fields["document_key"] = require_str(item, "url", pointer, offenders)
        fields["title"] = require_str(item, "title", pointer, offenders, optional=True)
        start = require_int(item, "start_index", pointer, offenders)
        end = require_int(item, "end_index", pointer, offenders)
        if not require_order(start, end, pointer, "end_index", offenders):
            return None
        located = _locate(text, {"start_index": start, "end_index": end}, pointer, offenders,
                          unit=unit)  # fmt: skip
        if located is None:
            return None
        span = _to_nfc(literal, normalized, base + located[0], base + located[1])
    else:
        fields["document_key"] = require_str(item, "file_id", pointer, offenders)
        fields["title"] = require_str(item, "filename", pointer, offenders, optional=True)
        point = require_int(item, "index", pointer, offenders)
        if point is None:
            return None
        located = _locate(text, {"index": point}, pointer, offenders, unit=unit)
        if located is None:
            return None
        span = _to_nfc(literal, normalized, base, base + len(text))
        marker = _to_nfc(literal, normalized, base + located[0], base + located[0])
        if span is not None and marker is not None:
            fields["answer_marker"] = marker[0]
        else:
            span = None
    if len(offenders) != before:
        return None
    if span is None:
        return {**fields, "skip_reason": "answer_span_not_convertible"}
    fields["answer_start"], fields["answer_end"] = span
    if span[0] == span[1]:
        fields["skip_reason"] = "empty_answer_span"
    return fields


def _locate(
    text: str, offsets: dict[str, int], pointer: str, offenders: list[Offender], *, unit
) -> list[int] | None:
    """Provider offsets into one part's text, as code points of that text."""
    out = []
    for key, value in offsets.items():
        try:
            out.append(to_codepoint(text, value, unit))
        except ValueError:
            offenders.append(
                Offender(
                    pointer_join(pointer, key),
                    "offset",
                    f"{key} is outside the text or inside a character ({unit}).",
                )
            )
    return out if len(out) == len(offsets) else None


def _to_nfc(literal: str, normalized: str, start: int, end: int) -> tuple[int, int] | None:
    try:
        return (
            codepoint_to_nfc(literal, start, normalized=normalized),
            codepoint_to_nfc(literal, end, normalized=normalized),
        )
    except ValueError:
        return None
