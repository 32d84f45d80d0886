"""crw search evidence (crw-core `SourceEvidence`, `Highlight`), read as crw
serializes it (camelCase).

`crw-search`: `payload` = `{"answer": str, "sources": [SourceEvidence, …]}`. Each
`Highlight` of a source is one candidate link from the whole answer (NFC code
points [0, len)) to the passage mapped from the source's `url`. `charStart` /
`charEnd` index crw's *normalized* markdown of the page (crw_normalize); crw calls
them "char" indices without naming the unit, so they are read as Unicode code
points (SOURCE_UNIT) unless the client declares `offset_unit`. The service maps
them back to the passage text and checks that `text` is what that span holds.
A source without `highlights` (crw omits the key when empty) yields no link and is
reported `no_highlights`. `score` is relevance to a query, never support.

Passages are keyed by the source's `url`.
"""

from __future__ import annotations

from typing import Any

from common.kernel.refusals import Offender, pointer_join
from evidence.offsets import nfc
from grounding.citations import (
    Citation,
    OffsetUnit,
    Parsed,
    is_number,
    require_int,
    require_list,
    require_order,
    require_str,
)

FORMAT = "crw-search"
# The unit of Highlight.charStart / charEnd (see the module docstring).
SOURCE_UNIT: OffsetUnit = "codepoint"


def parse(
    payload: Any, *, pointer: str = "/payload", offset_unit: OffsetUnit | None = None
) -> Parsed:
    """The answer and one citation per Highlight; offenders for a malformed shape."""
    result = Parsed()
    offenders = result.offenders
    if not isinstance(payload, dict):
        offenders.append(Offender(pointer or "/", "type", "the payload must be an object."))
        return result
    answer = payload.get("answer")
    if not isinstance(answer, str):
        code = "required" if answer is None else "type"
        offenders.append(Offender(pointer_join(pointer, "answer"), code, "answer is a string."))
        answer = ""
    result.answer_text = nfc(answer)
    end = len(result.answer_text)
    unit = offset_unit or SOURCE_UNIT
    sources = require_list(payload, "sources", pointer, offenders)
    for i, source in enumerate(sources or []):
        where = pointer_join(pointer, "sources", i)
        common = _source(source, where, offenders)
        if common is None:
            continue
        highlights = source.get("highlights")
        if not highlights:  # omitted when empty, by crw's wire contract
            result.citations.append(
                Citation(
                    index=len(result.citations),
                    pointer=where,
                    type="source",
                    container={"source_index": i},
                    raw=source,
                    skip_reason="no_highlights",
                    **common,
                )
            )
            continue
        for j, highlight in enumerate(highlights):
            at = pointer_join(where, "highlights", j)
            fields = _highlight(highlight, at, offenders, unit=unit)
            if fields is None:
                continue
            fields["data"] = {**common["data"], **fields["data"]}
            if end == 0:
                fields["skip_reason"] = "empty_answer_span"
            result.citations.append(
                Citation(
                    index=len(result.citations),
                    pointer=at,
                    type="highlight",
                    container={"source_index": i, "highlight_index": j},
                    raw=highlight,
                    answer_start=0,
                    answer_end=end,
                    document_key=common["document_key"],
                    title=common["title"],
                    **fields,
                )
            )
    return result


def _source(source: Any, pointer: str, offenders: list[Offender]) -> dict[str, Any] | None:
    if not isinstance(source, dict):
        offenders.append(Offender(pointer, "type", "a source must be an object."))
        return None
    before = len(offenders)
    url = require_str(source, "url", pointer, offenders)
    title = source.get("title")
    if not isinstance(title, str):
        code = "required" if title is None else "type"
        offenders.append(Offender(pointer_join(pointer, "title"), code, "title is a string."))
    position = require_int(source, "position", pointer, offenders)
    highlights = source.get("highlights")
    if highlights is not None and not isinstance(highlights, list):
        offenders.append(
            Offender(pointer_join(pointer, "highlights"), "type", "highlights is a list.")
        )
    if len(offenders) != before:
        return None
    return {"document_key": url, "title": title, "data": {"position": position}}


def _highlight(
    item: Any, pointer: str, offenders: list[Offender], *, unit: OffsetUnit
) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        offenders.append(Offender(pointer, "type", "a highlight must be an object."))
        return None
    before = len(offenders)
    text = item.get("text")
    if not isinstance(text, str):
        code = "required" if text is None else "type"
        offenders.append(Offender(pointer_join(pointer, "text"), code, "text is a string."))
    score = item.get("score")
    if not is_number(score):
        code = "required" if score is None else "type"
        offenders.append(Offender(pointer_join(pointer, "score"), code, "score is a number."))
    start = require_int(item, "charStart", pointer, offenders)
    end = require_int(item, "charEnd", pointer, offenders)
    require_order(start, end, pointer, "charEnd", offenders)
    source_hash = require_str(item, "sourceHash", pointer, offenders, optional=True)
    if len(offenders) != before:
        return None
    data: dict[str, Any] = {"score": score}
    fields: dict[str, Any] = {
        "source_raw_span": (start, end),
        "source_unit": unit,
        "source_space": "crw-markdown",
        "cited_text": text,
        "mismatch_reason": "highlight_text_mismatch",
        "data": data,
    }
    if source_hash is not None:
        # A Highlight's hash always covers the full normalized markdown.
        fields.update(source_hash=source_hash, source_text_kind="markdown")
        data["source_hash"] = source_hash
    if start == end:
        fields["skip_reason"] = "empty_source_span"
    return fields
