"""Gemini `generateContent`: a GenerateContentResponse as returned, and the
`groundingMetadata` of its first candidate.

The answer text is the concatenation, in order, of the `text` of every part of
`candidates[0].content.parts` that has one, except thought parts (`"thought":
true`, the model's reasoning summary, which the SDKs also leave out of
`response.text`). Only the first candidate is read.

For each `groundingSupports[i]` and each index `k` at position `j` of its
`groundingChunkIndices`, one citation from the support's segment to the passage
mapped from `"k"` (the chunk index as a string). `confidenceScores[j]`, when
given, is carried as data and never makes a link visible.

Offsets: `segment.startIndex` / `segment.endIndex` are UTF-8 *byte* offsets
(ANSWER_UNIT), half-open, within the text of the part named by `partIndex`
(default 0). As proto3 JSON omits zero values, an absent startIndex, endIndex or
partIndex is 0. They are converted to code points of that part, moved by the
part's position in the concatenation, and converted to NFC code points over the
whole answer text. Nothing is rounded; a support whose offset falls inside a
UTF-8 sequence (`segment_offset_inside_character`), past its part
(`segment_outside_part`), in a part that is not answer text
(`segment_part_not_text`) or absent (`segment_part_not_found`), or on no NFC
boundary (`answer_span_not_convertible`) is reported skipped with that reason and
the other supports proceed. `segment.text`, when present, is compared with the
text at the converted span and the result reported (`segment_text_check`); the
offsets decide the span.

The source side is a locator only (`web.uri`, `retrievedContext.uri`,
`maps.uri`, reported as data): no source span is claimed and the anchor stays
unattempted. Field names are read in their JSON (lowerCamel) form and, as
protobuf's JSON parsers accept, in their proto (snake_case) form.
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
    is_int,
    is_number,
    locator_selector,
    to_codepoint,
)

FORMAT = "gemini-generate-content"
# The unit of segment.startIndex / endIndex (see the module docstring).
ANSWER_UNIT: OffsetUnit = "utf8"
CHUNK_KINDS = ("web", "retrievedContext", "maps")
NO_SOURCE_SPAN = "source span not provided by provider"


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def _key(obj: dict, name: str) -> str:
    """The key under which `name` is present (lowerCamel first), else `name`."""
    if name in obj:
        return name
    snake = _snake(name)
    return snake if snake in obj else name


def _get(
    obj: dict,
    name: str,
    offenders: list[Offender],
    pointer: str,
    kind: type | tuple,
    *,
    default: Any = None,
) -> Any:
    key = _key(obj, name)
    value = obj.get(key)
    if value is None:
        return default
    ok = is_int(value) if kind is int else isinstance(value, kind)
    if not ok or (kind is int and value < 0):
        what = "a non-negative integer" if kind is int else f"a {_names(kind)}"
        offenders.append(Offender(pointer_join(pointer, key), "type", f"{name} must be {what}."))
        return None
    return value


def _names(kind: type | tuple) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(
        {dict: "object", list: "list", str: "string"}.get(k, k.__name__) for k in kinds
    )


def parse(
    payload: Any, *, pointer: str = "/payload", offset_unit: OffsetUnit | None = None
) -> Parsed:
    """Normalize a GenerateContentResponse; offenders for a malformed shape.

    `offset_unit` overrides ANSWER_UNIT for a client that knows its offsets
    were counted otherwise."""
    result = Parsed()
    offenders = result.offenders
    if not isinstance(payload, dict):
        offenders.append(Offender(pointer or "/", "type", "the payload must be an object."))
        return result
    candidates = _get(payload, "candidates", offenders, pointer, list)
    if not candidates:
        if candidates is not None or not offenders:
            offenders.append(
                Offender(
                    pointer_join(pointer, "candidates"),
                    "required",
                    "candidates must hold the answer.",
                )
            )
        return result
    where = pointer_join(pointer, _key(payload, "candidates"), 0)
    candidate = candidates[0]
    if not isinstance(candidate, dict):
        offenders.append(Offender(where, "type", "a candidate must be an object."))
        return result
    content = _get(candidate, "content", offenders, where, dict, default={})
    at_content = pointer_join(where, "content")
    parts = _get(content or {}, "parts", offenders, at_content, list, default=[])
    texts = _answer_parts(parts or [], pointer_join(at_content, "parts"), offenders)
    literal = "".join(t for t in texts if t is not None)
    result.answer_text = nfc(literal)
    metadata = _get(candidate, "groundingMetadata", offenders, where, dict, default={})
    if metadata is None:
        return result
    at_meta = pointer_join(where, _key(candidate, "groundingMetadata"))
    chunks = _get(metadata, "groundingChunks", offenders, at_meta, list, default=[]) or []
    supports = _get(metadata, "groundingSupports", offenders, at_meta, list, default=[]) or []
    at_supports = pointer_join(at_meta, _key(metadata, "groundingSupports"))
    unit = offset_unit or ANSWER_UNIT
    for i, support in enumerate(supports):
        _support(
            support,
            i,
            pointer_join(at_supports, i),
            result,
            texts=texts,
            chunks=chunks,
            literal=literal,
            unit=unit,
        )
    return result


def _answer_parts(parts: list, pointer: str, offenders: list[Offender]) -> list[str | None]:
    """Each part's answer text, or None for a part that is not answer text."""
    texts: list[str | None] = []
    for n, part in enumerate(parts):
        if not isinstance(part, dict):
            offenders.append(Offender(pointer_join(pointer, n), "type", "a part is an object."))
            texts.append(None)
            continue
        text = _get(part, "text", offenders, pointer_join(pointer, n), str)
        texts.append(None if part.get("thought") is True else text)
    return texts


def _support(
    support: Any,
    i: int,
    pointer: str,
    result: Parsed,
    *,
    texts: list[str | None],
    chunks: list,
    literal: str,
    unit: OffsetUnit,
) -> None:
    offenders = result.offenders
    if not isinstance(support, dict):
        offenders.append(Offender(pointer, "type", "a grounding support is an object."))
        return
    before = len(offenders)
    segment = _get(support, "segment", offenders, pointer, dict)
    at_segment = pointer_join(pointer, _key(support, "segment"))
    if segment is None and len(offenders) == before:
        offenders.append(Offender(at_segment, "required", "segment is required."))
    segment = segment or {}
    part = _get(segment, "partIndex", offenders, at_segment, int, default=0)
    start = _get(segment, "startIndex", offenders, at_segment, int, default=0)
    end = _get(segment, "endIndex", offenders, at_segment, int, default=0)
    quoted = _get(segment, "text", offenders, at_segment, str)
    indices = _get(support, "groundingChunkIndices", offenders, pointer, list, default=[])
    scores = _get(support, "confidenceScores", offenders, pointer, list, default=[])
    at_indices = pointer_join(pointer, _key(support, "groundingChunkIndices"))
    for j, k in enumerate(indices or []):
        if not is_int(k) or k < 0:
            offenders.append(
                Offender(
                    pointer_join(at_indices, j), "type", "a chunk index is a non-negative integer."
                )
            )
    for j, score in enumerate(scores or []):
        if not is_number(score):
            offenders.append(
                Offender(
                    pointer_join(pointer, _key(support, "confidenceScores"), j),
                    "type",
                    "a confidence score is a number.",
                )
            )
    if None not in (start, end) and end < start:
        offenders.append(
            Offender(
                pointer_join(at_segment, _key(segment, "endIndex")),
                "range",
                "endIndex is before startIndex.",
            )
        )
    if len(offenders) != before:
        return
    span, reason = _span(texts, part, start, end, literal, result.answer_text, unit)
    data: dict[str, Any] = {"part_index": part, "segment": {"start_index": start, "end_index": end}}
    if quoted is not None and span is not None:
        found = result.answer_text[span[0] : span[1]]
        data["segment_text_check"] = "match" if found == nfc(quoted) else "mismatch"
    common: dict[str, Any] = {
        "type": "grounding_support",
        "raw": support,
        "source_note": NO_SOURCE_SPAN,
    }
    if span is not None:
        common.update(answer_start=span[0], answer_end=span[1])
    if not indices:
        result.citations.append(
            Citation(
                index=len(result.citations),
                pointer=pointer,
                container={"support_index": i},
                skip_reason=reason or "no_grounding_chunks",
                data=data,
                **common,
            )
        )
        return
    for j, k in enumerate(indices):
        fields = _chunk(chunks, k)
        fields["data"] = {**data, **fields["data"], "chunk_index": k}
        if j < len(scores):
            fields["data"]["confidence_score"] = scores[j]  # data, never a verdict
        if reason:
            fields["skip_reason"] = reason
        result.citations.append(
            Citation(
                index=len(result.citations),
                pointer=pointer_join(at_indices, j),
                container={"support_index": i, "chunk_position": j},
                document_key=str(k),
                **common,
                **fields,
            )
        )


def _chunk(chunks: list, k: int) -> dict[str, Any]:
    """The source side of chunk k: a locator, its title and uri as data."""
    chunk = chunks[k] if k < len(chunks) else None
    if not isinstance(chunk, dict):
        return {"skip_reason": "grounding_chunk_not_found", "data": {}}
    kind = next(
        (name for name in CHUNK_KINDS if isinstance(chunk.get(_key(chunk, name)), dict)), None
    )
    if kind is None:
        return {"skip_reason": "unsupported_citation_type", "data": {}}
    body = chunk[_key(chunk, kind)]
    data: dict[str, Any] = {"chunk_kind": kind}
    if isinstance(body.get("uri"), str):
        data["uri"] = body["uri"]  # a locator, never an identity
    title = body.get("title") if isinstance(body.get("title"), str) else None
    return {"source_selector": locator_selector(kind), "title": title, "data": data}


def _span(
    texts: list[str | None],
    part: int,
    start: int,
    end: int,
    literal: str,
    normalized: str,
    unit: OffsetUnit,
) -> tuple[tuple[int, int] | None, str | None]:
    """The segment as NFC code points over the whole answer, or why it has none."""
    if part >= len(texts):
        return None, "segment_part_not_found"
    text = texts[part]
    if text is None:
        return None, "segment_part_not_text"
    base = sum(len(t) for t in texts[:part] if t is not None)
    if end > _size(text, unit):
        return None, "segment_outside_part"
    try:
        points = [to_codepoint(text, offset, unit) for offset in (start, end)]
    except ValueError:
        return None, "segment_offset_inside_character"
    try:
        span = tuple(codepoint_to_nfc(literal, base + p, normalized=normalized) for p in points)
    except ValueError:
        return None, "answer_span_not_convertible"
    # The NFC span must hold exactly the NFC of the literal segment, or it is no span.
    if normalized[span[0] : span[1]] != nfc(text[points[0] : points[1]]):
        return None, "answer_span_not_convertible"
    if span[0] == span[1]:
        return span, "empty_answer_span"
    return span, None  # type: ignore[return-value]


def _size(text: str, unit: OffsetUnit) -> int:
    if unit == "utf8":
        return len(text.encode("utf-8"))
    if unit == "utf16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)
