"""Source changes a WSP import reveals (docs/api.md "WSP import", `changes`).

An extracted document whose text for a canonical URL differs from the text of the
extracted-document passage a link of the Dimension is bound to is a `source` change
of that URL: recorded once as a change notification, inside the import's
transaction, and fanned out to the Dimension's links of that source. Search-result
snippets vary with the query and are never a source change. The change_ref is
derived from the Dimension, the URL and the new text's digest, so the same change
seen again (another import of the same text) is the same notification.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.db.models import Q

from grounding.choices import RecordState
from grounding.models import GroundingLink
from grounding.services.changes import do_notify_source_changes

EXTRACTED = "extracted_document"


def change_ref_for(dimension, canonical_url: str, sha: str) -> str:
    digest = hashlib.sha256(f"{dimension.name}\n{canonical_url}\n{sha}".encode()).hexdigest()
    return f"urn:grounding:wsp-source-change:{digest[:32]}"


def detect(actor, dimension, passages: list[tuple[int, Any]]) -> dict[int, list[dict[str, Any]]]:
    """Record the source changes the import's extracted documents reveal; the report
    entries by document index."""
    new_text: dict[str, tuple[int, str]] = {}
    for index, passage in passages:
        if passage.kind == EXTRACTED and passage.canonical_url:
            new_text.setdefault(passage.canonical_url, (index, passage.content_sha256))
    if not new_text:
        return {}
    bound = (
        GroundingLink.objects.filter(
            dimension=dimension,
            current_passage__passage__kind=EXTRACTED,
            current_passage__passage__canonical_url__in=list(new_text),
        )
        .exclude(Q(record_state=RecordState.WITHDRAWN) | Q(record_state=RecordState.DISPOSED))
        .values_list(
            "current_passage__passage__canonical_url",
            "current_passage__passage__content_sha256",
        )
        .distinct()
    )
    changed: dict[str, str] = {}
    for url, sha in bound:
        if sha and sha != new_text[url][1]:
            changed[url] = new_text[url][1]
    if not changed:
        return {}
    urls = sorted(changed)
    entries = do_notify_source_changes(
        actor=actor,
        dimension=dimension,
        changes=[
            (url, change_ref_for(dimension, url, changed[url]), "extracted text changed")
            for url in urls
        ],
    )
    found: dict[int, list[dict[str, Any]]] = {}
    for url, entry in zip(urls, entries, strict=True):
        found.setdefault(new_text[url][0], []).append(entry)
    return found
