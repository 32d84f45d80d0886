"""ProjectedTextV3 invariants: hash, mechanical segments and the allowed transformations.

Definitions this registry applies (Amendment 002 §4 names the transformations; their
exact behaviour is ours to pin down, so it is pinned here):

- ``whitespace_norm``: every run of Unicode whitespace (``str.isspace``) becomes one
  U+0020 and the result is stripped: ``" ".join(source.split())``.
- ``deterministic_truncation``: the projected text is a prefix (possibly all) of the
  source after the other transformations; the observation must also carry a
  ``truncated_by_limit`` policy action (checked by the caller).
- ``mechanical_segmentation``: changes segments only, never the text.
- ``image_base64_replace``: every data-URI run of the source (``data:<media>;base64,
  <payload>``, see ``DATA_URI``) was replaced by placeholder text of the engine's
  choosing. The placeholder is not constrained beyond containing no data URI; the
  literal text between the runs must survive unchanged (after ``whitespace_norm``
  when listed, where whitespace next to a placeholder may be absorbed by it).

Transformations apply in that fixed order (image replacement, whitespace, truncation)
whatever order they are listed in.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from common.kernel.canonical import text_sha256
from common.kernel.refusals import Offender, pointer_join
from common.kernel.text import storable
from evidence.offsets import nfc

DATA_URI = re.compile(
    r"data:[A-Za-z0-9!#$&^_.+/-]*(?:;[A-Za-z0-9!#$&^_.+=-]+)*;base64,[A-Za-z0-9+/=]+"
)

WHITESPACE_NORM = "whitespace_norm"
TRUNCATION = "deterministic_truncation"
IMAGE_REPLACE = "image_base64_replace"


def whitespace_norm(text: str) -> str:
    return " ".join(text.split())


def _template(source: str, transformations: set[str]) -> list[str | None]:
    """Literal pieces of the source, with None where a data-URI placeholder goes."""
    if IMAGE_REPLACE in transformations:
        pieces: list[str | None] = []
        for i, literal in enumerate(DATA_URI.split(source)):
            if i:
                pieces.append(None)
            pieces.append(literal)
    else:
        pieces = [source]
    if WHITESPACE_NORM not in transformations:
        return pieces
    normalized: list[str | None] = []
    for literal in pieces:
        if literal is None:
            normalized.append(None)
            continue
        collapsed = re.sub(r"\s+", " ", literal)
        # Whitespace at the ends of the text is stripped; next to a placeholder it may
        # have been absorbed, so it is dropped and the wildcard covers it.
        normalized.append(collapsed.strip())
    return normalized


def derives_from(projected: str, source: str, transformations: list[str]) -> bool:
    """Whether `projected` is obtained from `source` by exactly the listed transformations."""
    listed = set(transformations)
    if IMAGE_REPLACE in listed and DATA_URI.search(projected):
        return False
    template = _template(source, listed)
    may_truncate = TRUNCATION in listed
    # Positions of `projected` reachable after matching the pieces so far.
    positions = {0}
    end = len(projected)
    for piece in template:
        if piece is None:
            positions = set(range(min(positions), end + 1)) if positions else set()
            continue
        nxt = set()
        for pos in positions:
            if projected.startswith(piece, pos):
                nxt.add(pos + len(piece))
            elif may_truncate and piece.startswith(projected[pos:]):
                return True  # the text ends inside this piece: a prefix
        positions = nxt
        if not positions:
            return False
    return end in positions


def segment_offenders(projected: dict, base: str) -> Iterator[Offender]:
    """Hash and segment invariants of one ProjectedTextV3 (at pointer `base`)."""
    text = projected.get("text")
    if not isinstance(text, str):
        return
    if not storable(text):
        return  # unstorable_character already names it; it has no UTF-8 digest
    digest = projected.get("text_sha256")
    if isinstance(digest, str) and digest != text_sha256(text):
        yield Offender(
            pointer_join(base, "text_sha256"),
            "text_sha256_mismatch",
            "text_sha256 is the sha256 of the text's UTF-8 bytes",
        )
    segments = projected.get("segments")
    if not isinstance(segments, list):
        return
    normalized = nfc(text)
    expected_start = 0
    pieces: list[str] = []
    faults = 0
    for j, segment in enumerate(segments):
        if not isinstance(segment, dict):
            return
        start, end, piece = segment.get("start"), segment.get("end"), segment.get("text")
        if not (_is_int(start) and _is_int(end) and isinstance(piece, str)):
            return  # the schema reports the malformed segment
        pointer = pointer_join(base, "segments", j)
        if start != expected_start:
            faults += 1
            yield Offender(
                pointer_join(pointer, "start"),
                "segments_not_contiguous",
                f"segment starts at {start}, previous ended at {expected_start}",
            )
        if not 0 <= start < end <= len(normalized):
            faults += 1
            yield Offender(
                pointer_join(pointer, "end"),
                "segment_range_invalid",
                f"[{start}, {end}) is not a non-empty range of the {len(normalized)} code points",
            )
        elif piece != normalized[start:end] and nfc(piece) != normalized[start:end]:
            # A literal (non-NFC) piece is accepted when it normalizes to its range.
            faults += 1
            yield Offender(
                pointer_join(pointer, "text"),
                "segment_text_mismatch",
                "segment text differs from its range of the NFC text",
            )
        expected_start = end
        pieces.append(piece)
    # Overshooting the text is segment_range_invalid; here only falling short.
    if expected_start < len(normalized):
        faults += 1
        yield Offender(
            pointer_join(base, "segments"),
            "segments_not_covering",
            f"segments end at {expected_start}; the NFC text has {len(normalized)} code points",
        )
    if not faults and "".join(pieces) != text:
        yield Offender(
            pointer_join(base, "segments"),
            "segments_concat_mismatch",
            "the segments' texts concatenated differ from the projected text",
        )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
