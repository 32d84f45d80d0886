"""One citation ⇒ one register item (or a skip with its reason), with the anchor
observation to record once the link exists. No writes here.

The statement side is the answer span (`<answer_revision_ref>#cp=<start>-<end>`,
a TextPositionSelector in NFC code points) or, for a structured answer's field
(crw-extract), the field (`<answer_revision_ref>#<JSON pointer>`, a
FragmentSelector conforming to RFC 6901). The claim is the answer's own words at
the span, or the field's own value; provider text is never copied into it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from common.kernel.canonical import canonical_sha256
from grounding.citations import (
    JSON_POINTER_FRAGMENT,
    SELECTOR_PROFILE,
    Citation,
)
from grounding.citations.sources import locate
from grounding.services.citations import documents as pdf_documents
from policies.models import Dimension

MASTER_REF_PREFIX = "urn:grounding:citation:"
SUPPORT_SCOPE = {
    "covers": "the cited answer span",
    "limits": "as cited by the provider; not assessed",
}
FIELD_SUPPORT_SCOPE = {
    "covers": "the extracted field's value",
    "limits": "as cited by the provider; not assessed",
}


@dataclass
class Plan:
    citation: Citation
    skip: str | None = None
    item: dict[str, Any] | None = None
    master_ref: str | None = None
    source_span: dict[str, int] | None = None
    source_note: str | None = None
    observation: dict[str, Any] | None = None  # a supplied observation to record
    run_resolver: bool = False  # or: run the builtin resolver on the passage text
    hash_check: str | None = None  # match | mismatch | not_held | unrecognized | …
    transformation_ref: str | None = None
    outcome: str = "skipped"
    # A citation of a PDF document: the page bound, its selector, and where the quote
    # was found (resolved | ambiguous | unresolved, with a reason).
    page: int | None = None
    selector: dict[str, Any] | None = None
    page_status: str | None = None
    page_reason: str | None = None


def plan(
    c: Citation,
    *,
    request: dict,
    dimension: Dimension,
    answer: str,
    texts: dict[str, str],
    media_type: str,
    documents: dict[str, pdf_documents.DocumentPages] | None = None,
) -> Plan:
    """The register item for one citation, or the reason it is skipped."""
    result = Plan(citation=c)
    if c.skip_reason:
        result.skip = c.skip_reason
        return result
    mapped = request["passages"].get(c.document_key) if c.document_key is not None else None
    if mapped is None:
        result.skip = "passage_not_mapped"
        return result
    if "document_id" in mapped:
        # A PDF: the page the quote is on becomes the passage (documents.locate).
        mapped = pdf_documents.locate(result, c, (documents or {})[mapped["document_id"]])
        if mapped is None:
            return result
        selector = result.selector
    else:
        given = mapped.get("passage_id")
        selector = locate(result, c, texts.get(given) if isinstance(given, str) else None)
    if result.skip:
        return result
    if selector is None:
        result.skip = "source_not_located"
        return result

    support: dict[str, Any] = {
        "support_kind": c.support_kind
        or ("quotation" if c.type == "char_location" and c.cited_text else "contextual"),
        "support_scope": dict(FIELD_SUPPORT_SCOPE if c.statement_pointer else SUPPORT_SCOPE),
        "use_basis": request.get("use_basis") or "unknown",
    }
    if request.get("generation_evidence_ref"):
        support["generation_evidence_ref"] = request["generation_evidence_ref"]
    anchor: dict[str, Any] = {"source_selector": selector, "selector_profile": SELECTOR_PROFILE}
    if result.transformation_ref:
        anchor["transformation_ref"] = result.transformation_ref
    item: dict[str, Any] = {
        "dimension": dimension.name,
        "profile": request["profile"],
        "owner_ref": request.get("owner_ref") or dimension.owner_ref,
        "statement": _statement(c, request=request, answer=answer, media_type=media_type),
        "passage": dict(mapped),
        "anchor": anchor,
        "support": support,
    }
    if request.get("asserted_at"):
        item["time"] = {"asserted_at": request["asserted_at"]}
    digest = canonical_sha256(
        {"format": request["format"], "index": c.index, "citation": c.raw, "item": item}
    )
    result.master_ref = f"{MASTER_REF_PREFIX}{digest}"
    item["master_ref"] = result.master_ref
    result.item = item
    return result


def _statement(c: Citation, *, request: dict, answer: str, media_type: str) -> dict[str, Any]:
    ref = request["answer_revision_ref"]
    if c.statement_pointer is not None:
        # Deterministic: the same answer revision and field name the same statement.
        statement_ref = f"{ref}#{c.statement_pointer}"
        answer_selector: dict[str, Any] = {
            "type": "FragmentSelector",
            "value": c.statement_pointer,
            "conformsTo": JSON_POINTER_FRAGMENT,
        }
        proposition = c.proposition or c.statement_pointer
    else:
        start, end = c.answer_start, c.answer_end
        # Deterministic: the same answer revision and span name the same statement.
        statement_ref = f"{ref}#cp={start}-{end}"
        answer_selector = {"type": "TextPositionSelector", "start": start, "end": end}
        if c.answer_marker is not None:
            # A point citation: the marker, relative to the statement span, zero-width.
            at = c.answer_marker - start
            answer_selector["refinedBy"] = {"type": "TextPositionSelector", "start": at, "end": at}
        # The answer's own words at the span; provider text is never copied here.
        proposition = answer[start:end]
    return {
        "statement_ref": statement_ref,
        "answer_revision_ref": ref,
        "answer_selector": answer_selector,
        "answer_representation": {
            "language": request.get("language") or "und",
            "media_type": request.get("media_type") or media_type,
        },
        "claim_scope": {"proposition": proposition},
    }
