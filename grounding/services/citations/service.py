"""register_from_citations: provider citations in, candidate links out, in one
durable transaction. Records; never judges.

The body `do_register_from_citations` composes two operations' bodies in that one
transaction: `do_register_many` for the links and `do_record_anchor_observation`
for the observations a provider's quote or span allows (policies.actions).

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
- Each format's offsets, units and skip reasons are stated in its parser
  (anthropic, openai, gemini, crw_extract, crw_search); what is checked against
  the passage text (spans, quotes, crw hashes) is in sources; the register item
  in plan; the per-citation report in report. docs/citations.md sums them up.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import IntegrityError

from common.kernel.refusals import Offender, Refusal, pointer_join
from evidence.models import Passage
from grounding import bodies
from grounding.bodies import BULK_MAX_ITEMS
from grounding.citations import anthropic, crw_extract, crw_search, gemini, openai
from grounding.models import GroundingLink
from grounding.services import input_rules, inputs
from grounding.services._common import refusal_context, refuse_invalid
from grounding.services.anchoring import do_record_anchor_observation
from grounding.services.citations import documents as pdf_documents
from grounding.services.citations.plan import plan as plan_citation
from grounding.services.citations.report import build_report, remap
from grounding.services.register import REGISTER_REFUSALS, do_register_many
from grounding.values import structured
from policies import audit
from policies.actions import composable
from policies.choices import Role
from policies.memberships import memberships
from policies.models import Dimension, Profile
from policies.operations import Operation
from policies.services import (
    require_active,
    require_published,
    require_role,
    unknown_dimension,
)

PARSERS = {
    anthropic.FORMAT: anthropic.parse,
    openai.FORMAT: openai.parse,
    gemini.FORMAT: gemini.parse,
    crw_extract.FORMAT: crw_extract.parse,
    crw_search.FORMAT: crw_search.parse,
}

REQUEST = inputs.FROM_CITATIONS
# Members that must be non-empty strings when given: every member with a scalar
# check but `format` (its enum check says more); payload and passages are objects.
_STRINGS = tuple(key for key in REQUEST.checks if key != "format")


def check_request(request: Any) -> list[Offender]:
    """The request's own members (the payload is the parsers' business)."""
    if not isinstance(request, dict):
        return [Offender("/", "type", "the body must be an object.")]
    offenders = REQUEST.unknown(request)
    for key in REQUEST.required:
        if request.get(key) in (None, ""):
            offenders.append(Offender(f"/{key}", "required", f"{key} is required."))
    for key in _STRINGS:
        value = request.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            offenders.append(Offender(f"/{key}", "type", f"{key} must be a non-empty string."))
    for key in ("answer_revision_ref", "owner_ref"):
        value = request.get(key)
        if isinstance(value, str) and len(value) > REQUEST.max_length(key):
            offenders.append(Offender(f"/{key}", "max_length", f"{key} is too long."))
    offenders += _option_offenders(request)
    for key in ("format", "offset_unit"):
        allowed = REQUEST.choices(key)
        if request.get(key) is not None and request[key] not in allowed:
            offenders.append(
                Offender(f"/{key}", "enum", f"{key} must be one of {', '.join(allowed)}.")
            )
    if request.get("payload") is not None and not isinstance(request["payload"], dict):
        offenders.append(Offender("/payload", "type", "payload must be the provider's object."))
    passages = request.get("passages")
    if passages is not None and not isinstance(passages, dict):
        offenders.append(Offender("/passages", "type", "passages must be an object."))
    elif isinstance(passages, dict):
        offenders += [
            Offender(pointer_join("/passages", key), "type", "a passage must be an object.")
            for key, value in passages.items()
            if not isinstance(value, dict)
        ]
    return offenders


def _option_offenders(request: dict) -> list[Offender]:
    """The options every derived link carries, judged as register judges them but up
    front: a request is refused for what it says, not for whether one of its citations
    happened to map to a passage (the OpenAPI description states these rules)."""
    given = {
        key: request[key]
        for key in ("language", "media_type")
        if isinstance(request.get(key), str) and request[key].strip()
    }
    offenders = []
    if given:
        # The other member at a value the shipped schema admits: only the given ones judged.
        representation = {"language": "und", "media_type": "text/plain", **given}
        offenders += [
            o
            for o in structured.validate("answer_representation", representation)
            if o.pointer.lstrip("/").split("/")[0] in given
        ]
    return offenders + input_rules.check_use_basis(request, pointer="")


def register_from_citations(*, actor, request: dict) -> tuple[dict, bool]:
    """Register one candidate link per mapped citation, all in one transaction.

    Returns (report, created): `created` is True when at least one link was written.
    """
    dimension = request.get("dimension") if isinstance(request, dict) else None
    try:
        return _register(actor=actor, request=request, dimension=_str_or_none(dimension))
    except IntegrityError:
        # An identical request committed the same master_refs between our read and
        # our insert; the second attempt (a new transaction) finds them and replays.
        return _register(actor=actor, request=request, dimension=_str_or_none(dimension))


@composable
def do_register_from_citations(*, actor, request: Any, dimension: str | None) -> tuple[dict, bool]:
    """The request's links and observations; `dimension` is the name the request
    gives (screened and audited like any string argument)."""
    offenders = check_request(request)
    if not isinstance(request, dict):
        refuse_invalid(offenders)
    dim, profile = _policy(request, offenders, actor)
    if dim is not None and profile is not None:
        # Role and policy come before any detail of the payload is judged.
        require_active(dim)
        require_role(actor, dim, *REGISTER_FROM_CITATIONS.roles)
        require_published(profile)
    refuse_invalid(offenders)

    parsed = PARSERS[request["format"]](
        request["payload"], pointer="/payload", offset_unit=request.get("offset_unit")
    )
    refuse_invalid(parsed.offenders)
    texts = _passage_texts(request["passages"], dim)
    documents, unknown = pdf_documents.load(request["passages"], dim)
    refuse_invalid(unknown)
    plans = [
        plan_citation(
            c,
            request=request,
            dimension=dim,
            answer=parsed.answer_text,
            texts=texts,
            media_type=parsed.media_type,
            documents=documents,
        )
        for c in parsed.citations
    ]
    wanted = [p for p in plans if p.item is not None]
    if len(wanted) > BULK_MAX_ITEMS:
        # One request registers at most what one bulk request may (API.md "Tenancy").
        detail = f"the payload holds {len(wanted)} citations; at most {BULK_MAX_ITEMS} are taken."
        raise Refusal(
            "validation_error",
            "the request is not valid.",
            offenders=[Offender("/payload", "max_items", detail)],
        )
    # master_ref is unique per Dimension: another tenant's equal ref is not a replay.
    existing = set(
        GroundingLink.objects.filter(
            dimension=dim, master_ref__in=[p.master_ref for p in wanted]
        ).values_list("master_ref", flat=True)
    )
    new = [p for p in wanted if p.master_ref not in existing]
    for plan in wanted:
        plan.outcome = "replayed" if plan.master_ref in existing else "created"
    if new:
        try:
            links = do_register_many(actor=actor, items=[p.item for p in new])
        except Refusal as refusal:
            if refusal.code != "validation_error":
                raise
            raise Refusal(
                refusal.code, refusal.detail, offenders=remap(refusal.offenders, new)
            ) from refusal
        for plan, link in zip(new, links, strict=True):
            if plan.observation is not None:
                do_record_anchor_observation(
                    actor=actor,
                    grounding_id=link.grounding_id,
                    expected_revision=1,
                    observation=plan.observation,
                    reason="provider quote checked in the PDF's pages"
                    if plan.page_status
                    else "provider text checked at the converted span",
                )
            elif plan.run_resolver:
                do_record_anchor_observation(
                    actor=actor,
                    grounding_id=link.grounding_id,
                    expected_revision=1,
                    use_builtin_resolver=True,
                    reason="provider quote resolved in the passage text",
                )
    report = build_report(request, plans, created=len(new), dimension=dim)
    audit.record(
        actor=actor,
        action=REGISTER_FROM_CITATIONS.action,
        dimension=dim,
        references={
            "request_sha256": report["request_sha256"],
            "created": len(new),
            "replayed": len(wanted) - len(new),
            "skipped": len(plans) - len(wanted),
        },
    )
    return report, bool(new)


REGISTER_FROM_CITATIONS = Operation(
    "register_from_citations",
    body=do_register_from_citations,
    run=register_from_citations,
    input=bodies.FromCitationsRequestSerializer,
    output="grounding.api.serializers_citations.FromCitationsReportSerializer",
    roles=(Role.CURATOR,),
    refusals=REGISTER_REFUSALS,
    success=(200, 201),
    summary="Register candidate links from a provider's citations",
    description=(
        "Body: dimension, profile, answer_revision_ref, format "
        "(anthropic-messages | openai-responses | gemini-generate-content | crw-extract | "
        "crw-search), payload (the provider's response "
        "object as returned) and passages (document key ⇒ {passage_id} or an "
        "external binding). 201 when links were created, 200 on a replay."
    ),
    operation_id="groundings_from_citations",
    context=refusal_context,
)
_register = REGISTER_FROM_CITATIONS.entry


# -- the request


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _policy(
    request: dict, offenders: list[Offender], actor
) -> tuple[Dimension | None, Profile | None]:
    dimension = profile = None
    name = request.get("dimension")
    if isinstance(name, str) and name:
        # A Dimension where the caller holds no role reads as one that does not exist.
        dimension = memberships(actor).named(name)
        if dimension is None:
            offenders.append(unknown_dimension())
    ref = request.get("profile")
    if isinstance(ref, str) and ref:
        # A Dimension's own profiles only for its members (Profile.by_ref's contract).
        profile = Profile.by_ref(ref, dimension)
        if profile is None:
            offenders.append(Offender("/profile", "unknown_reference", "no such profile."))
    return dimension, profile


def _passage_texts(passages: dict, dimension: Dimension) -> dict[str, str]:
    """Local literal text of the mapped imported passages of the Dimension, by
    passage_id as given (another Dimension's passage is refused by register)."""
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
        for p in Passage.objects.filter(
            pk__in=list(ids.values()), dimension=dimension
        ).select_related("content")
        if p.content_id
    }
    return {given: found[key] for given, key in ids.items() if key in found}
