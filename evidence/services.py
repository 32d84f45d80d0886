"""Writes of the evidence app: the WSP v3 import.

One ResponseV3 is validated whole (JSON Schema + every cross-field rule) and then
imported in one transaction: the envelope becomes a RetrievalObservation, every
observation a Passage with its literal text stored once per sha256 in Content.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.db import IntegrityError, transaction

from evidence.choices import AccessLabel
from evidence.models import Content, Passage, RetrievalObservation, Source
from evidence.wsp import document_error_code, validate_response
from evidence.wsp.rules_envelope import storable
from policies import audit
from policies.bulk import insert_with_history
from policies.choices import Role
from policies.refusals import Refusal
from policies.services import require_role_anywhere

ACTION = "wsp_import"
# §2 presence rules: the field carrying an observation's literal text, by kind.
LITERAL_FIELD = {"search_result": "snippet", "extracted_document": "text"}


@dataclass(frozen=True)
class ImportResult:
    report: dict[str, Any]
    created: bool


def document_sha256(document: Any) -> str:
    """sha256 of the canonical JSON of a document (keys sorted, compact, UTF-8)."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def content_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def import_wsp_document(*, actor, document: dict) -> ImportResult:
    """Import one WSP v3 ResponseV3; replay an identical one; refuse anything else.

    Refusals (`role_required`, `wsp_contract_violation`, `banned_field`,
    `execution_conflict`) store nothing and write a refused audit event.
    """
    execution_id = _execution_id(document)
    try:
        require_role_anywhere(actor, Role.CURATOR)
        offenders = validate_response(document)
        if offenders:
            code = document_error_code(offenders)
            raise Refusal(
                code,
                f"the WSP v3 response has {len(offenders)} contract offender(s); nothing stored.",
                offenders=offenders,
            )
        digest = document_sha256(document)
        replay = _replay(execution_id, digest)
        if replay is not None:
            return replay
        try:
            return _import(actor=actor, document=document, digest=digest)
        except IntegrityError:
            # A concurrent import of the same execution won the unique execution_id.
            replay = _replay(execution_id, digest)
            if replay is None:
                raise
            return replay
    except Refusal as refusal:
        audit.record_refusal(
            actor=actor, action=ACTION, code=refusal.code, references={"execution_id": execution_id}
        )
        raise


def _execution_id(document: Any) -> str | None:
    value = document.get("execution_id") if isinstance(document, dict) else None
    # Only a plausible identifier goes into the audit row, never arbitrary input.
    if isinstance(value, str) and 0 < len(value) <= 255 and storable(value):
        return value
    return None


def _replay(execution_id: str, digest: str) -> ImportResult | None:
    stored = (
        RetrievalObservation.objects.filter(execution_id=execution_id)
        .only("document_sha256", "report")
        .first()
    )
    if stored is None:
        return None
    if stored.document_sha256 != digest:
        raise Refusal(
            "execution_conflict",
            f"execution {execution_id} was already imported with a different document.",
        )
    return ImportResult(report=stored.report, created=False)


@transaction.atomic(durable=True)
def _import(*, actor, document: dict, digest: str) -> ImportResult:
    execution_id = document["execution_id"]
    observations = document["observations"]
    envelope = RetrievalObservation(
        execution_id=execution_id,
        request_id=document.get("request_id"),
        capability=document["capability"],
        status=document["status"],
        error=document.get("error"),
        engine=document.get("engine"),
        provider_attempts=document["provider_attempts"],
        policy_actions=document["policy_actions"],
        results=document["results"],
        source_diversity=document["source_diversity"],
        cache_status=document["cache_status"],
        routing_receipt=document["routing_receipt"],
        document_sha256=digest,
        imported_by=actor if getattr(actor, "pk", None) else None,
    )
    literals = [obs[LITERAL_FIELD[obs["kind"]]] for obs in observations]
    hashes = [content_sha256(text) for text in literals]

    # One query each: stored content, stored sources, earlier passages of the same content.
    stored_hashes = set(
        Content.objects.filter(sha256__in=set(hashes)).values_list("sha256", flat=True)
    )
    sources = _sources(observations, actor)
    first_passage = _first_passages(set(hashes), execution_id)

    new_content: dict[str, Content] = {}
    passages: list[Passage] = []
    unseen = 0
    for obs, text, sha in zip(observations, literals, hashes, strict=True):
        if sha not in stored_hashes and sha not in new_content:
            unseen += 1
            # Literal text: never normalized (NFC is for coordinates only).
            new_content[sha] = Content(sha256=sha, text=text, length=len(text))
        passages.append(_passage(obs, envelope, sources, sha, first_passage.get(sha)))

    received = len(observations)
    report = {
        "import_id": str(envelope.observation_id),
        "execution_id": execution_id,
        "observations": {"received": received, "created": unseen, "duplicates": received - unseen},
        "novelty_score": math.floor(100 * unseen / received) if received else 0,
        "passages": [
            {
                "observation_id": p.observation_id,
                "passage_id": str(p.passage_id),
                "duplicate_of": str(p.duplicate_of_id) if p.duplicate_of_id else None,
            }
            for p in passages
        ],
        "rejected": 0,
    }
    envelope.report = report
    envelope.save(force_insert=True)
    # Content is keyed by its digest: a row inserted concurrently is the same text.
    Content.objects.bulk_create(new_content.values(), ignore_conflicts=True)
    insert_with_history(Passage, passages, user=actor, change_reason=ACTION)
    audit.record(
        actor=actor,
        action=ACTION,
        references={"execution_id": execution_id, "import_id": report["import_id"]},
    )
    return ImportResult(report=report, created=True)


def _sources(observations: list[dict], actor) -> dict[str, Source]:
    """Sources by canonical URL: fetched in one query, the missing ones bulk-created."""
    urls = {obs["url"]["canonical"] for obs in observations}
    sources = {s.canonical_url: s for s in Source.objects.filter(canonical_url__in=urls)}
    missing = [
        Source(canonical_url=url, host=(urlsplit(url).hostname or "")[:255])
        for url in sorted(urls - set(sources))
    ]
    if missing:
        insert_with_history(Source, missing, user=actor, change_reason=ACTION)
        sources.update({s.canonical_url: s for s in missing})
    return sources


def _first_passages(hashes: set[str], execution_id: str) -> dict[str, Any]:
    """For each digest, the root of the earliest passage holding it in another execution."""
    earliest: dict[str, Any] = {}
    rows = (
        Passage.objects.filter(content_sha256__in=hashes)
        .exclude(execution_id=execution_id)
        .order_by("created_at", "passage_id")
        .values_list("content_sha256", "passage_id", "duplicate_of_id")
    )
    for sha, passage_id, duplicate_of_id in rows:
        # Duplicates always point at a root, so one hop reaches it.
        earliest.setdefault(sha, duplicate_of_id or passage_id)
    return earliest


def _passage(
    obs: dict, envelope: RetrievalObservation, sources: dict[str, Source], sha: str, first
) -> Passage:
    source = sources[obs["url"]["canonical"]]
    score = obs.get("provider_score") or {}
    published = obs.get("published_at") or {}
    return Passage(
        passage_ref=f"urn:wsp:{envelope.execution_id}:{obs['observation_id']}",
        source=source,
        content_id=sha,
        content_sha256=sha,
        kind=obs["kind"],
        source_field=LITERAL_FIELD[obs["kind"]],
        locator=obs["url"]["observed"],
        observed_url=obs["url"]["observed"],
        canonical_url=obs["url"]["canonical"],
        title=obs.get("title"),
        # A restricted source restricts every passage taken from it.
        access_label=source.access_label or AccessLabel.PUBLIC,
        retrieval_observation=envelope,
        execution_id=envelope.execution_id,
        observation_id=obs["observation_id"],
        provider=obs["provider"],
        endpoint_id=obs["endpoint_id"],
        provider_attempt_id=obs["provider_attempt_id"],
        provider_result_index=obs["provider_result_index"],
        provider_rank=obs.get("provider_rank"),
        provider_score_value=score.get("value"),
        provider_score_semantics=score.get("semantics", ""),
        published_at_raw=published.get("raw"),
        published_at_normalized=published.get("normalized"),
        provider_fields=obs.get("provider_fields") or {},
        duplicate_of_id=first,
    )
