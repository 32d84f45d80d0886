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
from policies.kernel.refusals import Refusal

_LINK_JOINS = (
    "dimension",
    "profile",
    "current_statement",
    "current_passage__passage__content",
    "current_anchor_observation",
    "withdrawal",
)


# Prefetched into plain lists: Django's default prefetch cache builds a queryset per
# link and relation, which cost more than rendering the link. Read through
# `current_records`.
_ASSESSMENTS = "_read_assessments"
_MEMBERSHIPS = "_read_memberships"


def links_for_read() -> QuerySet[GroundingLink]:
    return for_read(GroundingLink.objects.all())


def for_read(queryset: QuerySet[GroundingLink]) -> QuerySet[GroundingLink]:
    """`queryset` with what rendering a link document needs joined and prefetched."""
    return queryset.select_related(*_LINK_JOINS).prefetch_related(
        Prefetch(
            "assessments",
            queryset=Assessment.objects.order_by("recorded_revision"),
            to_attr=_ASSESSMENTS,
        ),
        Prefetch(
            "set_memberships",
            queryset=EvidenceSetMembership.objects.filter(
                removed_in_set_revision__isnull=True
            ).select_related("evidence_set"),
            to_attr=_MEMBERSHIPS,
        ),
    )


# Columns of the joined rows that a link document never shows. A page would fetch and
# decode them once per link (a profile's field_schemas holds JSON Schemas), so lists
# leave them out. Rendering touches none of them: a deferred field read per link would
# show as extra queries in the list's query-count test.
_NOT_RENDERED = (
    "updated_at",
    "dimension__created_at",
    "profile__support_vocabulary",
    "profile__selector_profiles",
    "profile__field_schemas",
    "profile__endpoint_role_map",
    "profile__published_at",
    "profile__retired_at",
    "profile__created_at",
    "current_statement__created_at",
    "current_passage__created_at",
    "current_passage__passage__provider_fields",
    "current_passage__passage__created_at",
)


def links_for_list() -> QuerySet[GroundingLink]:
    """`links_for_read()` for pages of rendered links."""
    return links_for_read().defer(*_NOT_RENDERED)


def as_registered(link: GroundingLink) -> GroundingLink:
    """A link `register` just wrote, ready to render without reading it back: a new
    link has no assessments, set memberships or withdrawal yet."""
    setattr(link, _ASSESSMENTS, [])
    setattr(link, _MEMBERSHIPS, [])
    GroundingLink.withdrawal.related.set_cached_value(link, None)
    return link


def get_link(grounding_id: Any) -> GroundingLink:
    try:
        key = uuid.UUID(str(grounding_id))
        return links_for_read().get(pk=key)
    except (ValueError, GroundingLink.DoesNotExist) as exc:
        raise Refusal("not_found", "no grounding link has this id.") from exc


def current_records(link: GroundingLink) -> LinkRecords:
    """Records of a link fetched with `links_for_read()` (no further queries); any
    other link instance reads them through its managers."""
    try:
        withdrawal = link.withdrawal
    except Withdrawal.DoesNotExist:
        withdrawal = None
    assessments = getattr(link, _ASSESSMENTS, None)
    memberships = getattr(link, _MEMBERSHIPS, None)
    return LinkRecords(
        assessments=list(link.assessments.all()) if assessments is None else assessments,
        memberships=(
            list(link.set_memberships.filter(removed_in_set_revision__isnull=True))
            if memberships is None
            else memberships
        ),
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


def dimension_name_of(grounding_id: uuid.UUID) -> str | None:
    """The name of the Dimension a link is in (None when there is no such link)."""
    return (
        GroundingLink.objects.filter(pk=grounding_id)
        .values_list("dimension__name", flat=True)
        .first()
    )
