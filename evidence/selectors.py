"""Reads of the evidence app: querysets with their joins already applied."""

from __future__ import annotations

from django.db.models import QuerySet

from evidence.models import Passage

# Envelope members a passage read never shows; deferring them keeps list pages light.
_ENVELOPE_DEFERRED = (
    "retrieval_observation__results",
    "retrieval_observation__provider_attempts",
    "retrieval_observation__routing_receipt",
    "retrieval_observation__source_diversity",
    "retrieval_observation__report",
    "retrieval_observation__engine",
    "retrieval_observation__error",
)


def passages_for_list() -> QuerySet[Passage]:
    """Passages with Dimension, content, source and envelope joined: a fixed number of
    queries a page."""
    return (
        Passage.objects.select_related("dimension", "content", "source", "retrieval_observation")
        .defer(*_ENVELOPE_DEFERRED)
        .order_by("-passage_id")
    )
