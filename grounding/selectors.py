"""Reusable reads, with their joins and prefetches applied so pages make a fixed
number of queries whatever their size."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import Prefetch, QuerySet

from grounding.models import (
    AnchorObservation,
    Assessment,
    EvidenceSetMembership,
    GroundingLink,
    Withdrawal,
)
from grounding.representation import LinkRecords
from policies.refusals import Refusal

_LINK_JOINS = (
    "dimension",
    "profile",
    "current_statement",
    "current_passage__passage__content",
    "current_anchor_observation",
    "withdrawal",
)


def links_for_read() -> QuerySet[GroundingLink]:
    return GroundingLink.objects.select_related(*_LINK_JOINS).prefetch_related(
        Prefetch("assessments", queryset=Assessment.objects.order_by("recorded_revision")),
        Prefetch(
            "set_memberships",
            queryset=EvidenceSetMembership.objects.filter(
                removed_in_set_revision__isnull=True
            ).select_related("evidence_set"),
        ),
    )


def get_link(grounding_id: Any) -> GroundingLink:
    try:
        key = uuid.UUID(str(grounding_id))
        return links_for_read().get(pk=key)
    except (ValueError, GroundingLink.DoesNotExist) as exc:
        raise Refusal("not_found", "no grounding link has this id.") from exc


def current_records(link: GroundingLink) -> LinkRecords:
    """Records of a link fetched with `links_for_read()` (no further queries)."""
    try:
        withdrawal = link.withdrawal
    except Withdrawal.DoesNotExist:
        withdrawal = None
    return LinkRecords(
        assessments=list(link.assessments.all()),
        memberships=list(link.set_memberships.all()),
        withdrawal=withdrawal,
        anchor_observation=link.current_anchor_observation,
    )


def link_at_revision(link: GroundingLink, revision: int) -> tuple[GroundingLink, LinkRecords]:
    """The link as it read at `revision`: its history row and the records that existed."""
    row = (
        GroundingLink.history.filter(grounding_id=link.grounding_id, revision=revision)
        .order_by("-history_date", "-history_id")
        .first()
    )
    if row is None:
        raise Refusal("not_found", f"the link has no revision {revision}.")
    past = row.instance
    past.dimension = link.dimension
    past.profile = link.profile
    withdrawal = Withdrawal.objects.filter(link=link, recorded_revision__lte=revision).first()
    observation = (
        AnchorObservation.objects.filter(pk=row.current_anchor_observation_id).first()
        if row.current_anchor_observation_id
        else None
    )
    memberships = [
        m
        for m in EvidenceSetMembership.history.as_of(row.history_date).filter(link_id=link.pk)
        if m.removed_in_set_revision is None
    ]
    records = LinkRecords(
        assessments=list(
            Assessment.objects.filter(link=link, recorded_revision__lte=revision).order_by(
                "recorded_revision"
            )
        ),
        memberships=memberships,
        withdrawal=withdrawal,
        anchor_observation=observation,
    )
    return past, records


def revision_rows(link: GroundingLink) -> QuerySet:
    """One history row per revision, oldest first."""
    return (
        GroundingLink.history.filter(grounding_id=link.grounding_id)
        .select_related("history_user")
        .order_by("revision", "history_date")
    )
