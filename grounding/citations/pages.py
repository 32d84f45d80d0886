"""A quote looked up in a document's pages (docs/api.md "PDF evidence", citations).

The quote and each page's text are compared in NFC with each run of white space as
one space (PDFium breaks lines where the provider's quote has a space, and the other
way round); that is the only normalization, and the anchor records it
(`WHITESPACE_TRANSFORMATION`). Positions are mapped back to the page's own text (NFC
code points, half-open), so a selector names the page's characters, not the
collapsed copy.

Found once in the pages searched: that page, resolved. Found more than once:
ambiguous, never one picked. Not found on any one page: unresolved; when the quote
runs from one searched page into the next it is reported as across a page break,
bound to the page where it starts, and still never resolved. Pure: no Django, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evidence.offsets import nfc

# The anchor's transformation: what was compared, stated so a reader can redo it.
WHITESPACE_TRANSFORMATION = "urn:grounding:transformation:nfc-whitespace-runs-as-one-space@1"
PAGE_RESOLVER_REF = "urn:grounding:resolver:pdf-page-quote@1"
CONTEXT = 32  # code points of prefix and suffix a resolved quote carries
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Collapsed:
    text: str  # white space runs as one space
    starts: list[int]  # for each character of `text`, where it starts in the page text
    ends: list[int]  # and where it ends


def collapse(text: str) -> Collapsed:
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    at = 0
    for run in _SPACE.finditer(text):
        for i in range(at, run.start()):
            out.append(text[i])
            starts.append(i)
            ends.append(i + 1)
        out.append(" ")
        starts.append(run.start())
        ends.append(run.end())
        at = run.end()
    for i in range(at, len(text)):
        out.append(text[i])
        starts.append(i)
        ends.append(i + 1)
    return Collapsed("".join(out), starts, ends)


def _occurrences(haystack: str, needle: str) -> list[int]:
    found, at = [], haystack.find(needle)
    while at != -1:
        found.append(at)
        at = haystack.find(needle, at + 1)
    return found


@dataclass
class PageMatch:
    """Where a quote is in the pages searched. `page` is the page to bind (1-based)."""

    status: str  # resolved | ambiguous | unresolved
    page: int
    reason: str | None = None
    # (page, start, end) of every match, in the page texts' own code points.
    matches: list[tuple[int, int, int]] = field(default_factory=list)
    exact: str = ""
    prefix: str = ""
    suffix: str = ""


def find(pages: list[str], quote: str, first: int, last: int) -> PageMatch:
    """The quote in pages first..last (1-based, inclusive) of `pages` (NFC texts)."""
    wanted = _SPACE.sub(" ", nfc(quote)).strip()
    collapsed = {n: collapse(pages[n - 1]) for n in range(first, last + 1)}
    matches = []
    for n, page in collapsed.items():
        for at in _occurrences(page.text, wanted) if wanted else []:
            start, end = page.starts[at], page.ends[at + len(wanted) - 1]
            matches.append((n, start, end))
    if len(matches) == 1:
        n, start, end = matches[0]
        text = pages[n - 1]
        return PageMatch(
            "resolved",
            n,
            matches=matches,
            exact=text[start:end],
            prefix=text[max(0, start - CONTEXT) : start],
            suffix=text[end : end + CONTEXT],
        )
    if matches:
        return PageMatch("ambiguous", matches[0][0], reason="found_more_than_once", matches=matches)
    for n in range(first, last):
        if wanted and _runs_across(collapsed[n].text, collapsed[n + 1].text, wanted):
            return PageMatch("unresolved", n, reason="across_page_break")
    return PageMatch("unresolved", first, reason="cited_text_not_found")


def _runs_across(here: str, after: str, wanted: str) -> bool:
    """The quote begins on one page and ends on the next (joined by one space)."""
    joined = f"{here.rstrip()} {after.lstrip()}"
    boundary = len(here.rstrip())
    return any(at < boundary < at + len(wanted) for at in _occurrences(joined, wanted))
