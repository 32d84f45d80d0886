"""The report of a from-citations request (one entry per citation, with its
outcome: created, replayed or skipped with a reason), and register's offenders
pointed back into the request."""

from __future__ import annotations

from typing import Any

from common.kernel.canonical import canonical_sha256
from common.kernel.refusals import Offender, pointer_join
from grounding.choices import RecordState
from grounding.models import GroundingLink
from grounding.reader import tombstone
from grounding.services.citations.plan import Plan

_TOP_LEVEL = {
    "/dimension": "/dimension",
    "/profile": "/profile",
    "/owner_ref": "/owner_ref",
    "/statement/answer_revision_ref": "/answer_revision_ref",
    "/statement/answer_representation/language": "/language",
    "/statement/answer_representation/media_type": "/media_type",
    "/support/use_basis": "/use_basis",
    "/support/generation_evidence_ref": "/generation_evidence_ref",
    "/time/asserted_at": "/asserted_at",
}
_NO_ANSWER_SPAN = (
    "answer_span_not_convertible",
    "unsupported_citation_type",
    "segment_part_not_found",
    "segment_part_not_text",
    "segment_outside_part",
    "segment_offset_inside_character",
)
_LOCATOR_TYPES = ("url_citation", "file_citation")


def remap(offenders: list[Offender], plans: list[Plan]) -> list[Offender]:
    """Register's offenders point into its items; point them into this request."""
    out: list[Offender] = []
    for offender in offenders:
        head, _, rest = offender.pointer.removeprefix("/items/").partition("/")
        plan = plans[int(head)] if head.isdigit() and int(head) < len(plans) else None
        rest = f"/{rest}" if rest else ""
        if plan is None:
            pointer = offender.pointer
        elif rest.startswith("/passage"):
            key = pointer_join("/passages", plan.citation.document_key)
            pointer = key + rest.removeprefix("/passage")
        else:
            pointer = next(
                (to for prefix, to in _TOP_LEVEL.items() if rest.startswith(prefix)),
                plan.citation.pointer,
            )
        moved = Offender(pointer, offender.code, offender.detail)
        if moved not in out:
            out.append(moved)
    return out


def _entry(plan: Plan) -> dict[str, Any]:
    c = plan.citation
    entry: dict[str, Any] = {"index": c.index, **c.container, "type": c.type,
                             "outcome": plan.outcome}  # fmt: skip
    if plan.skip:
        entry["reason"] = plan.skip
    entry["document_key"] = c.document_key
    if c.title is not None:
        entry["title"] = c.title  # data as the provider gave it, not an attribution
    if c.statement_pointer is not None:
        entry["statement_pointer"] = c.statement_pointer
        entry["answer_span"] = None
    elif plan.skip in _NO_ANSWER_SPAN:
        entry["answer_span"] = None
    else:
        entry["answer_span"] = {"start": c.answer_start, "end": c.answer_end}
    entry["source_span"] = plan.source_span
    note = plan.source_note or c.source_note
    if note:
        entry["source_span_note"] = note
    elif c.type in _LOCATOR_TYPES:
        entry["source_span_note"] = "source span not provided by provider"
    if plan.hash_check:
        entry["source_hash_check"] = plan.hash_check
    if c.data:
        entry["provider_data"] = dict(c.data)  # scores, confidences: data, never a verdict
    entry["anchor"] = "unattempted"
    if plan.page is not None:
        entry["page"] = plan.page
    return entry


def build_report(
    request: dict, plans: list[Plan], *, created: int, dimension: Any
) -> dict[str, Any]:
    refs = [p.master_ref for p in plans if p.item is not None]
    links = {
        link.master_ref: link
        for link in GroundingLink.objects.filter(
            dimension=dimension, master_ref__in=refs
        ).select_related("dimension", "current_statement", "current_anchor_observation")
    }
    citations, listed = [], []
    for plan in plans:
        entry = _entry(plan)
        link = links.get(plan.master_ref)
        if link is not None and link.record_state == RecordState.DISPOSED:
            # A disposed link shows what its tombstone shows, here as everywhere: no
            # statement_ref, no master_ref, no anchor.
            entry["grounding_id"] = str(link.grounding_id)
            entry["record_state"] = RecordState.DISPOSED.value
            listed.append(tombstone(link))
        elif link is not None:
            entry["grounding_id"] = str(link.grounding_id)
            entry["master_ref"] = link.master_ref
            observation = link.current_anchor_observation
            if observation is not None:
                entry["anchor"] = observation.anchor_result.get("status", "unattempted")
                if observation.anchor_result.get("reason"):
                    entry["anchor_reason"] = observation.anchor_result["reason"]
            if plan.page_status:
                # Where the quote was found in the pages searched (several pages:
                # ambiguous, though no one page holds two matches).
                entry["anchor"] = plan.page_status
                if plan.page_reason:
                    entry["anchor_reason"] = plan.page_reason
            listed.append(
                {
                    "grounding_id": str(link.grounding_id),
                    "revision": link.revision,
                    "statement_ref": link.current_statement.statement_ref,
                    "master_ref": link.master_ref,
                }
            )
        citations.append(entry)
    replayed = sum(1 for p in plans if p.outcome == "replayed")
    return {
        "answer_revision_ref": request["answer_revision_ref"],
        "format": request["format"],
        "request_sha256": canonical_sha256(request),
        "created": created,
        "replayed": created == 0 and replayed > 0,
        "counts": {
            "created": created,
            "replayed": replayed,
            "skipped": sum(1 for p in plans if p.outcome == "skipped"),
        },
        "links": listed,
        "citations": citations,
    }
