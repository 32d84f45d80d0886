"""Citations of a PDF document (docs/api.md "PDF evidence", citations): a document key
mapped to `{"document_id"}` binds the page on which the cited text is found.

The document is the Dimension's own: another Dimension's id answers exactly as an
unknown one (`/passages/<key>/document_id` `unknown_reference`). Which pages are
searched: those the provider names (Anthropic `page_location`, [start, end)), else
every page when the provider gives a quote; with neither the citation is skipped
(`no_position`); pages past the document's end skip it (`page_outside_document`).
How the quote is found, and what each outcome binds, is grounding.citations.pages;
the outcome is recorded as the link's anchor observation, and the whitespace rule as
its anchor's transformation_ref.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from common.kernel.refusals import Offender, pointer_join
from evidence.models import Document, Passage
from evidence.offsets import nfc
from grounding.citations import Citation
from grounding.citations import pages as quotes

if TYPE_CHECKING:
    from grounding.services.citations.plan import Plan


@dataclass(frozen=True)
class DocumentPages:
    document_id: str
    passage_ids: list[str]  # by page, 1-based page n at n - 1
    texts: list[str]


def load(passages: dict, dimension: Any) -> tuple[dict[str, DocumentPages], list[Offender]]:
    """The Dimension's documents the request maps keys to, by document_id as given, and
    the offenders of mappings naming none."""
    found: dict[str, DocumentPages] = {}
    offenders: list[Offender] = []
    wanted: dict[str, tuple[str, uuid.UUID | None]] = {}
    for key, value in passages.items():
        if not isinstance(value, dict) or "document_id" not in value:
            continue
        pointer = pointer_join("/passages", key)
        offenders += [
            Offender(pointer_join(pointer, extra), "derived_field", "a document takes no " + extra)
            for extra in sorted(set(value) - {"document_id"})
        ]
        given = value["document_id"]
        try:
            wanted[key] = (given, uuid.UUID(str(given)) if isinstance(given, str) else None)
        except ValueError:
            wanted[key] = (given, None)
    ids = {parsed for _, parsed in wanted.values() if parsed is not None}
    documents = {
        d.pk: d for d in Document.objects.filter(pk__in=ids, dimension=dimension)
    } if ids and dimension is not None else {}  # fmt: skip
    pages: dict[Any, list[Passage]] = {}
    for page in (
        Passage.objects.filter(document_id__in=list(documents))
        .select_related("content")
        .order_by("document_id", "page_number")
    ):
        pages.setdefault(page.document_id, []).append(page)
    for key, (given, parsed) in sorted(wanted.items()):
        document = documents.get(parsed)
        if document is None:
            offenders.append(
                Offender(
                    pointer_join("/passages", key, "document_id"),
                    "unknown_reference",
                    "no document has this id.",
                )
            )
            continue
        mine = pages.get(document.pk, [])
        found[given] = DocumentPages(
            document_id=str(document.pk),
            passage_ids=[str(p.pk) for p in mine],
            # A purged page (its link disposed) has no text: it matches nothing.
            texts=[p.content.text if p.content_id else "" for p in mine],
        )
    return found, offenders


def locate(plan: Plan, c: Citation, document: DocumentPages) -> dict[str, Any] | None:
    """The page passage the citation binds (`{"passage_id"}`), its selector on
    `plan.selector`, and the check on `plan.observation`; None when skipped."""
    count = len(document.texts)
    if c.pages is not None:
        first, last = c.pages[0], c.pages[1] - 1
        if last > count:
            plan.skip = "page_outside_document"
            return None
    elif c.cited_text:
        first, last = 1, count
    else:
        plan.skip = "no_position"
        return None
    if not c.cited_text:
        # Pages but no quote: the first page named, by its fragment, nothing checked.
        plan.page = first
        plan.selector = c.source_selector
        return {"passage_id": document.passage_ids[first - 1]}
    match = quotes.find(document.texts, c.cited_text, first, last)
    text = document.texts[match.page - 1]
    plan.page, plan.page_status, plan.page_reason = match.page, match.status, match.reason
    plan.transformation_ref = quotes.WHITESPACE_TRANSFORMATION
    observation: dict[str, Any] = {
        "resolver_ref": quotes.PAGE_RESOLVER_REF,
        "text_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
    }
    here = [{"start": s, "end": e} for page, s, e in match.matches if page == match.page]
    if match.status == "resolved":
        [span] = here
        plan.source_span = dict(span)
        quote = {"type": "TextQuoteSelector", "exact": match.exact}
        quote.update({k: v for k, v in (("prefix", match.prefix), ("suffix", match.suffix)) if v})
        plan.selector = {"type": "TextPositionSelector", **span, "refinedBy": quote}
        observation.update(status="resolved", match_count=1, matches=here)
    else:
        exact = " ".join(nfc(c.cited_text).split())
        plan.selector = {"type": "TextQuoteSelector", "exact": exact}
        if match.status == "ambiguous" and len(here) == len(match.matches):
            observation.update(status="ambiguous", match_count=len(here), matches=here)
        else:
            # Not found on this page alone (elsewhere too, across a break, or nowhere):
            # nothing on it is claimed.
            reason = "found_on_several_pages" if match.status == "ambiguous" else match.reason
            observation.update(status="unresolved", match_count=0, matches=[], reason=reason)
    plan.observation = observation
    return {"passage_id": document.passage_ids[match.page - 1]}
