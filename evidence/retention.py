"""Disposal of local copies of source text: passage excerpts and titles, their
history rows, content rows no longer referenced, and the projected texts kept in
the retrieval envelope. What remains identifies rows by id and digest only.

Every copy belongs to one Dimension: a purge touches the passages, history rows and
envelopes of the Dimension it is asked for, and counts only those. Content rows are
shared by digest across Dimensions (an internal detail): one goes only when no row
of any Dimension refers to it any more, so another Dimension's text survives."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from common.kernel import compat
from evidence.models import Content, Passage, RetrievalObservation
from policies.models import Dimension

PURGED = {"purged": True}
_TEXT_FIELDS = ("title", "snippet", "text")


def purge_passages(
    *, dimension: Dimension, passage_ids: Iterable[uuid.UUID], actor
) -> dict[str, int]:
    """Purge the copied payloads of these passages of `dimension` everywhere that
    Dimension stores them (ids of another Dimension's passages are ignored)."""
    counts = {"passages": 0, "passage_history": 0, "content": 0, "envelopes": 0}
    passages = list(Passage.objects.filter(dimension=dimension, pk__in=list(passage_ids)))
    digests = {p.content_id for p in passages if p.content_id}
    by_envelope: dict[Any, set[str]] = {}
    for passage in passages:
        if passage.retrieval_observation_id:
            by_envelope.setdefault(passage.retrieval_observation_id, set()).add(
                passage.observation_id
            )
        passage.title = None
        passage.content = None
        passage.provider_fields = {}
        compat.set_history_context(passage, user=actor, reason="disposal purge")
        passage.save()
        counts["passages"] += 1
    # The passages' own history rows (a passage never changes Dimension).
    history = Passage.history.model.objects.filter(passage_id__in=[p.pk for p in passages])
    counts["passage_history"] = history.update(title=None, content=None, provider_fields={})
    still_used = set(
        Passage.objects.filter(content_id__in=digests).values_list("content_id", flat=True)
    ) | set(
        Passage.history.model.objects.filter(content_id__in=digests).values_list(
            "content_id", flat=True
        )
    )
    unused = digests - still_used
    counts["content"], _ = Content.disposal_queryset().filter(pk__in=unused).delete()
    for envelope_id, observation_ids in by_envelope.items():
        envelope = RetrievalObservation.objects.get(pk=envelope_id, dimension=dimension)
        results = _purge_results(envelope.results, observation_ids)
        if results != envelope.results:
            RetrievalObservation.disposal_queryset().filter(pk=envelope_id).update(results=results)
            counts["envelopes"] += 1
    return counts


def _purge_results(results: list[dict], observation_ids: set[str]) -> list[dict]:
    """Projected texts that came from a purged observation keep only their digest."""
    out = []
    for result in results:
        result = dict(result)
        for field in _TEXT_FIELDS:
            projected = result.get(field)
            if isinstance(projected, dict) and _from_purged(projected, observation_ids):
                result[field] = {
                    "text_sha256": projected.get("text_sha256"),
                    "origin": projected.get("origin"),
                    **PURGED,
                }
        out.append(result)
    return out


def _from_purged(projected: dict, observation_ids: set[str]) -> bool:
    provenance = projected.get("provenance") or {}
    if provenance.get("observation_id") in observation_ids:
        return True
    fragments = provenance.get("fragments") or []
    return any(f.get("observation_id") in observation_ids for f in fragments)
