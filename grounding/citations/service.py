"""register_from_citations: provider citations in, candidate links out, in one
durable transaction. Records; never judges.

Decisions (documented here because clients depend on them):
- Each supported citation with a mapped passage becomes one candidate link
  (`use_basis` as the client states it, else `unknown`). A citation whose
  document key is not in `passages` is *skipped* with reason
  `passage_not_mapped` and nothing is invented for it; the others are still
  registered. Unsupported citation types, empty or unconvertible spans are skipped
  the same way, each with its reason.
- Idempotency: every link's `master_ref` is `urn:grounding:citation:<sha256>` over
  the canonical JSON of the format, the citation's position and object as given,
  and the register item derived from it (which holds the Dimension, the answer
  revision and span, the mapped passage and every client option). It is an
  idempotency key in our own namespace, not an identity (the grounding id is
  still assigned here). Citations whose master_ref exists are *replayed* (read
  back, nothing written); the rest are created. Re-posting the same request
  creates nothing (200); a request that adds a mapping for a previously skipped
  citation creates only that link (201). Changing an option (language, owner,
  use_basis…) derives new links rather than silently reusing old ones.
- `char_location` with an imported passage holding local text: the offsets are
  converted to NFC code points with that text; if `cited_text` is present it is
  compared with the passage text at the converted span, and the result is
  recorded as an anchor observation (`resolved` with the one match, or
  `unresolved` with reason `cited_text_mismatch`). The selector is never
  retargeted. Offsets that fall outside the text or inside a character skip the
  citation (`source_offset_not_convertible`): no selector is fabricated. With an
  external passage (no local text) code-point offsets are recorded as given and
  the report says they are unverified.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError

from evidence.models import Passage
from evidence.offsets import nfc
from grounding.citations import (
    SELECTOR_PROFILE,
    Citation,
    anthropic,
    check_request,
    openai,
    sha256_json,
    span_to_nfc,
)
from grounding.models import GroundingLink
from grounding.services._common import operation, refuse_invalid
from grounding.services.anchoring import record_anchor_observation
from grounding.services.register import register_many
from policies import audit
from policies.choices import Role
from policies.models import Dimension, Profile
from policies.refusals import Offender, Refusal, pointer_join
from policies.services import require_active, require_published, require_role

PARSERS = {anthropic.FORMAT: anthropic.parse, openai.FORMAT: openai.parse}
MASTER_REF_PREFIX = "urn:grounding:citation:"
CHECK_RESOLVER_REF = "urn:grounding:resolver:citation-check@1"
SUPPORT_SCOPE = {
    "covers": "the cited answer span",
    "limits": "as cited by the provider; not assessed",
}


@dataclass
class _Plan:
    citation: Citation
    skip: str | None = None
    item: dict[str, Any] | None = None
    master_ref: str | None = None
    source_span: dict[str, int] | None = None
    source_note: str | None = None
    observation: dict[str, Any] | None = None
    outcome: str = "skipped"


def register_from_citations(*, actor, request: dict) -> tuple[dict, bool]:
    """Register one candidate link per mapped citation, all in one transaction.

    Returns (report, created): `created` is True when at least one link was written.
    """
    dimension = request.get("dimension") if isinstance(request, dict) else None
    try:
        return _register(actor=actor, request=request, dimension=_str_or_none(dimension))
    except IntegrityError:
        # An identical request committed the same master_refs between our read and
        # our insert; the second attempt finds them and replays.
        return _register(actor=actor, request=request, dimension=_str_or_none(dimension))


@operation("register_from_citations")
def _register(*, actor, request: Any, dimension: str | None) -> tuple[dict, bool]:
    offenders = check_request(request)
    if not isinstance(request, dict):
        refuse_invalid(offenders)
    dim, profile = _policy(request, offenders)
    if dim is not None and profile is not None:
        # Role and policy come before any detail of the payload is judged.
        require_active(dim)
        require_role(actor, dim, Role.CURATOR)
        require_published(profile)
    refuse_invalid(offenders)

    parsed = PARSERS[request["format"]](
        request["payload"], pointer="/payload", offset_unit=request.get("offset_unit")
    )
    refuse_invalid(parsed.offenders)
    texts = _passage_texts(request["passages"])
    plans = [
        _plan(c, request=request, dimension=dim, answer=parsed.answer_text, texts=texts)
        for c in parsed.citations
    ]
    wanted = [p for p in plans if p.item is not None]
    existing = set(
        GroundingLink.objects.filter(master_ref__in=[p.master_ref for p in wanted]).values_list(
            "master_ref", flat=True
        )
    )
    new = [p for p in wanted if p.master_ref not in existing]
    for plan in wanted:
        plan.outcome = "replayed" if plan.master_ref in existing else "created"
    if new:
        try:
            links = register_many.__wrapped__(actor=actor, items=[p.item for p in new])
        except Refusal as refusal:
            if refusal.code != "validation_error":
                raise
            raise Refusal(
                refusal.code, refusal.detail, offenders=_remap(refusal.offenders, new)
            ) from refusal
        for plan, link in zip(new, links, strict=True):
            if plan.observation is not None:
                record_anchor_observation.__wrapped__(
                    actor=actor,
                    grounding_id=link.grounding_id,
                    expected_revision=1,
                    observation=plan.observation,
                    reason="cited_text checked at the converted span",
                )
    report = _report(request, plans, created=len(new))
    audit.record(
        actor=actor,
        action="register_from_citations",
        dimension=dim,
        references={
            "request_sha256": report["request_sha256"],
            "created": len(new),
            "replayed": len(wanted) - len(new),
            "skipped": len(plans) - len(wanted),
        },
    )
    return report, bool(new)


# -- the request


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _policy(request: dict, offenders: list[Offender]) -> tuple[Dimension | None, Profile | None]:
    dimension = profile = None
    name = request.get("dimension")
    if isinstance(name, str) and name:
        dimension = Dimension.objects.filter(name=name).first()
        if dimension is None:
            offenders.append(Offender("/dimension", "unknown_reference", "no such Dimension."))
    ref = request.get("profile")
    if isinstance(ref, str) and ref:
        profile_name, _, version = ref.partition("@")
        profile = Profile.objects.filter(name=profile_name, version=version).first()
        if profile is None:
            offenders.append(Offender("/profile", "unknown_reference", "no such profile."))
    return dimension, profile


def _passage_texts(passages: dict) -> dict[str, str]:
    """Local literal text of the mapped imported passages, by passage_id as given."""
    ids: dict[str, str] = {}
    for value in passages.values():
        given = value.get("passage_id")
        if isinstance(given, str):
            try:
                ids[given] = str(uuid.UUID(given))
            except ValueError:
                continue  # refused by register, with its pointer
    found = {
        str(p.pk): p.content.text
        for p in Passage.objects.filter(pk__in=list(ids.values())).select_related("content")
        if p.content_id
    }
    return {given: found[key] for given, key in ids.items() if key in found}


# -- one citation ⇒ one register item


def _plan(
    c: Citation, *, request: dict, dimension: Dimension, answer: str, texts: dict[str, str]
) -> _Plan:
    plan = _Plan(citation=c)
    if c.skip_reason:
        plan.skip = c.skip_reason
        return plan
    mapped = request["passages"].get(c.document_key) if c.document_key is not None else None
    if mapped is None:
        plan.skip = "passage_not_mapped"
        return plan
    selector = c.source_selector
    if c.source_raw_span is not None:
        given = mapped.get("passage_id")
        selector = _position_selector(plan, c, texts.get(given) if isinstance(given, str) else None)
        if selector is None:
            return plan
    if selector is None:
        plan.skip = "source_not_located"
        return plan

    start, end = c.answer_start, c.answer_end
    answer_selector: dict[str, Any] = {"type": "TextPositionSelector", "start": start, "end": end}
    if c.answer_marker is not None:
        # A point citation: the marker, relative to the statement span, zero-width.
        at = c.answer_marker - start
        answer_selector["refinedBy"] = {"type": "TextPositionSelector", "start": at, "end": at}
    support: dict[str, Any] = {
        "support_kind": "quotation" if c.type == "char_location" and c.cited_text else "contextual",
        "support_scope": dict(SUPPORT_SCOPE),
        "use_basis": request.get("use_basis") or "unknown",
    }
    if request.get("generation_evidence_ref"):
        support["generation_evidence_ref"] = request["generation_evidence_ref"]
    item: dict[str, Any] = {
        "dimension": dimension.name,
        "profile": request["profile"],
        "owner_ref": request.get("owner_ref") or dimension.owner_ref,
        "statement": {
            # Deterministic: the same answer revision and span name the same statement.
            "statement_ref": f"{request['answer_revision_ref']}#cp={start}-{end}",
            "answer_revision_ref": request["answer_revision_ref"],
            "answer_selector": answer_selector,
            "answer_representation": {
                "language": request.get("language") or "und",
                "media_type": request.get("media_type") or "text/plain",
            },
            # The answer's own words at the span; provider text is never copied here.
            "claim_scope": {"proposition": answer[start:end]},
        },
        "passage": dict(mapped),
        "anchor": {"source_selector": selector, "selector_profile": SELECTOR_PROFILE},
        "support": support,
    }
    if request.get("asserted_at"):
        item["time"] = {"asserted_at": request["asserted_at"]}
    digest = sha256_json({"format": request["format"], "index": c.index, "citation": c.raw,
                      "item": item})  # fmt: skip
    plan.master_ref = f"{MASTER_REF_PREFIX}{digest}"
    item["master_ref"] = plan.master_ref
    plan.item = item
    return plan


def _position_selector(plan: _Plan, c: Citation, text: str | None) -> dict[str, Any] | None:
    """The source TextPositionSelector in NFC code points, and its cited_text check."""
    start, end = c.source_raw_span
    if text is None:
        if c.source_unit != "codepoint":
            plan.skip = "source_offset_not_convertible"
            return None
        plan.source_note = "passage text not held here; provider offsets recorded unverified"
        plan.source_span = {"start": start, "end": end}
        return {"type": "TextPositionSelector", "start": start, "end": end}
    normalized = nfc(text)
    try:
        start, end = span_to_nfc(text, start, end, c.source_unit, normalized=normalized)
    except ValueError:
        plan.skip = "source_offset_not_convertible"
        return None
    plan.source_span = {"start": start, "end": end}
    if c.cited_text is not None:
        observation: dict[str, Any] = {
            "resolver_ref": CHECK_RESOLVER_REF,
            "text_sha256": hashlib.sha256(normalized.encode("utf-8")).hexdigest(),
        }
        if normalized[start:end] == nfc(c.cited_text):
            observation.update(status="resolved", match_count=1,
                               matches=[{"start": start, "end": end}])  # fmt: skip
        else:
            # Recorded as found; the selector keeps the provider's location.
            observation.update(status="unresolved", match_count=0, matches=[],
                               reason="cited_text_mismatch")  # fmt: skip
        plan.observation = observation
    return {"type": "TextPositionSelector", "start": start, "end": end}


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


def _remap(offenders: list[Offender], plans: list[_Plan]) -> list[Offender]:
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


# -- the report


def _report(request: dict, plans: list[_Plan], *, created: int) -> dict[str, Any]:
    refs = [p.master_ref for p in plans if p.item is not None]
    links = {
        link.master_ref: link
        for link in GroundingLink.objects.filter(master_ref__in=refs).select_related(
            "current_statement", "current_anchor_observation"
        )
    }
    citations, listed = [], []
    for plan in plans:
        c = plan.citation
        entry: dict[str, Any] = {"index": c.index, **c.container, "type": c.type,
                                 "outcome": plan.outcome}  # fmt: skip
        if plan.skip:
            entry["reason"] = plan.skip
        entry["document_key"] = c.document_key
        if c.title is not None:
            entry["title"] = c.title  # data as the provider gave it, not an attribution
        convertible = plan.skip not in ("answer_span_not_convertible", "unsupported_citation_type")
        entry["answer_span"] = (
            {"start": c.answer_start, "end": c.answer_end} if convertible else None
        )
        entry["source_span"] = plan.source_span
        if plan.source_note:
            entry["source_span_note"] = plan.source_note
        elif c.type in ("url_citation", "file_citation"):
            entry["source_span_note"] = "source span not provided by provider"
        entry["anchor"] = "unattempted"
        link = links.get(plan.master_ref)
        if link is not None:
            entry["grounding_id"] = str(link.grounding_id)
            entry["master_ref"] = link.master_ref
            observation = link.current_anchor_observation
            if observation is not None:
                entry["anchor"] = observation.anchor_result.get("status", "unattempted")
                if observation.anchor_result.get("reason"):
                    entry["anchor_reason"] = observation.anchor_result["reason"]
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
        "request_sha256": sha256_json(request),
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
