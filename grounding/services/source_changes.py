"""Source changes a WSP import reveals (docs/api.md "WSP import", `changes`).

An extracted document whose text for a canonical URL differs from the text of the
extracted-document passage a link of the Dimension is bound to is a `source` change
of that URL: recorded once as a change notification, inside the import's
transaction, and fanned out to the Dimension's links of that source. Search-result
snippets vary with the query and are never a source change. The change_ref is
derived from the Dimension, the URL and the new text's digest, so the same change
seen again (another import of the same text) is the same notification.

A PDF's pages are passages of kind `pdf_page`, each naming its document: a new
document (other bytes) under a `source_ref` is a `source` change of it for the links
bound to an older document's pages, whatever each page's text (docs/api.md "PDF
evidence"); its change_ref is derived from the new bytes' digest the same way.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.db.models import Q

from grounding.choices import RecordState
from grounding.models import GroundingLink
from grounding.services.changes import do_notify_source_changes

EXTRACTED = "extracted_document"
PDF_PAGE = "pdf_page"


def change_ref_for(dimension, canonical_url: str, sha: str) -> str:
    digest = hashlib.sha256(f"{dimension.name}\n{canonical_url}\n{sha}".encode()).hexdigest()
    return f"urn:grounding:wsp-source-change:{digest[:32]}"


def detect(actor, dimension, passages: list[tuple[int, Any]]) -> dict[int, list[dict[str, Any]]]:
    """Record the source changes the import's extracted documents reveal; the report
    entries by document index."""
    new_text: dict[str, tuple[int, str]] = {}
    new_bytes: dict[str, tuple[int, str]] = {}
    for index, passage in passages:
        if passage.kind == EXTRACTED and passage.canonical_url:
            new_text.setdefault(passage.canonical_url, (index, passage.content_sha256))
        elif passage.kind == PDF_PAGE and passage.canonical_url:
            new_bytes.setdefault(passage.canonical_url, (index, passage.document.sha256))
    changed = _changed(dimension, EXTRACTED, "content_sha256", new_text)
    reasons = dict.fromkeys(changed, "extracted text changed")
    for url, sha in _changed(dimension, PDF_PAGE, "document__sha256", new_bytes).items():
        changed[url], reasons[url] = sha, "a new revision of the PDF"
    if not changed:
        return {}
    urls = sorted(changed)
    entries = do_notify_source_changes(
        actor=actor,
        dimension=dimension,
        changes=[(url, change_ref_for(dimension, url, changed[url]), reasons[url]) for url in urls],
    )
    found: dict[int, list[dict[str, Any]]] = {}
    for url, entry in zip(urls, entries, strict=True):
        index = (new_text.get(url) or new_bytes[url])[0]
        found.setdefault(index, []).append(entry)
    return found


def _changed(dimension, kind: str, revision: str, new: dict[str, tuple[int, str]]) -> dict:
    """URL -> the new revision, for the URLs whose bound passages of `kind` (of live
    links of the Dimension) hold another revision (`revision`: a passage's field)."""
    if not new:
        return {}
    bound = (
        GroundingLink.objects.filter(
            dimension=dimension,
            current_passage__passage__kind=kind,
            current_passage__passage__canonical_url__in=list(new),
        )
        .exclude(Q(record_state=RecordState.WITHDRAWN) | Q(record_state=RecordState.DISPOSED))
        .values_list(
            "current_passage__passage__canonical_url", f"current_passage__passage__{revision}"
        )
        .distinct()
    )
    return {url: new[url][1] for url, sha in bound if sha and sha != new[url][1]}
