"""Which matches of the anchored quote a page marks in the passage text it shows.

Everything comes from the reader's document: the passage text (`passage.excerpt`),
the recorded anchor result and, when no observation is recorded yet, the selector.
A recorded result is marked only when it was computed over this very text (its
`text_sha256`); with none recorded, the builtin resolver locates the quote for
display only (a pure function: nothing is recorded, no state changes), and every
match it finds is marked, none picked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evidence import anchoring as resolver
from grounding.templatetags.grounding_tags import anchor_applies


@dataclass(frozen=True)
class QuoteMarks:
    text: str | None
    # The anchor result whose matches are marked (None: nothing is marked).
    result: dict[str, Any] | None
    # The recorded anchor result, if any, and whether it applies to `text`.
    recorded: dict[str, Any] | None
    applies: bool
    # Located now by the builtin resolver for display; not a recorded observation.
    previewed: bool = False

    @property
    def match_count(self) -> int:
        return len(self.result["matches"]) if self.result else 0


def quote_marks(document: dict[str, Any]) -> QuoteMarks:
    passage = document.get("passage") or {}
    anchor = document.get("anchor") or {}
    text = passage.get("excerpt")
    recorded = anchor.get("anchor_result") or None
    applies = anchor_applies(text, recorded)
    if recorded is not None:
        return QuoteMarks(text, recorded if applies else None, recorded, applies)
    selector = anchor.get("source_selector")  # absent when withheld from the reader
    if text and isinstance(selector, dict):
        located = resolver.resolve(selector, text).as_anchor_result()
        if located["matches"]:
            return QuoteMarks(text, located, None, False, previewed=True)
    return QuoteMarks(text, None, None, False)
