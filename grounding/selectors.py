"""Reusable reads, with their joins and prefetches applied so pages make a fixed
number of queries whatever their size."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import Prefetch, QuerySet

from common.kernel import compat
from common.kernel.refusals import Refusal
from common.kernel.text import control_offenders
from grounding.models import (
    AnchorObservation,
    Assessment,
    EvidenceSet,
    EvidenceSetMembership,
    GroundingLink,
    Withdrawal,
)
from grounding.representation import LinkRecords
from policies.memberships import memberships

# What `policies.reader` answers for a link outside the reader's Dimensions, word for
# word: an unknown id and another tenant's read alike, wherever they are refused.
NO_SUCH_LINK = "no grounding link of yours has this id."

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


def _records() -> tuple[Prefetch, Prefetch]:
    """A link's records as rendering reads them: assessments in order, active set
    memberships with their sets."""
    return (
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


def for_read(queryset: QuerySet[GroundingLink]) -> QuerySet[GroundingLink]:
    """`queryset` with what rendering a link document needs joined and prefetched."""
    return queryset.select_related(*_LINK_JOINS).prefetch_related(*_records())


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
    compat.cache_related(GroundingLink.withdrawal.related, link, None)
    return link


def get_link(grounding_id: Any, *, actor=None) -> GroundingLink:
    """One link, with what rendering it needs joined, in one query; its records
    (assessments, set memberships) are fetched when it is first rendered
    (`current_records`), so only after the reader has let the caller see it.

    With `actor`, only the links of the Dimensions where the actor holds a role are
    looked in: a link of any other Dimension is `not_found` by the same statement, and
    the same number of statements, as an id no link has (API.md "Tenancy").
    """
    queryset = GroundingLink.objects.select_related(*_LINK_JOINS)
    if actor is not None:
        queryset = queryset.filter(dimension_id__in=member_dimension_ids(actor))
    try:
        key = uuid.UUID(str(grounding_id))
        return queryset.get(pk=key)
    except (ValueError, GroundingLink.DoesNotExist) as exc:
        raise Refusal("not_found", NO_SUCH_LINK) from exc


def member_dimension_ids(actor) -> list[int]:
    """Ids of the Dimensions where `actor` holds a role (read once per request, with
    the roles), in a fixed order so every statement naming them reads the same."""
    return sorted(memberships(actor).dimensions)


def current_records(link: GroundingLink) -> LinkRecords:
    """Records of a link fetched with `links_for_read()` (no further queries); any
    other link instance (`get_link`'s, a service's) reads them here, as they are now
    (two queries, the same two the prefetch makes)."""
    try:
        withdrawal = link.withdrawal
    except Withdrawal.DoesNotExist:
        withdrawal = None
    assessments = getattr(link, _ASSESSMENTS, None)
    if assessments is None:
        assessments = list(link.assessments.order_by("recorded_revision"))
    memberships = getattr(link, _MEMBERSHIPS, None)
    if memberships is None:
        memberships = list(
            link.set_memberships.filter(removed_in_set_revision__isnull=True).select_related(
                "evidence_set"
            )
        )
    return LinkRecords(
        assessments=assessments,
        memberships=memberships,
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


def dimension_name_of(grounding_id: uuid.UUID, *, actor=None) -> str | None:
    """The name of the Dimension a link is in (None when there is no such link).

    With `actor`, among the Dimensions where the actor holds a role only: what a
    refused request is filed under (API.md "Tenancy"), None for another tenant's link
    by the same statement as for an unknown id.
    """
    links = GroundingLink.objects.filter(pk=grounding_id)
    if actor is not None:
        links = links.filter(dimension_id__in=member_dimension_ids(actor))
    return links.values_list("dimension__name", flat=True).first()


def evidence_set_of(
    ref: Any, *, actor, dimension: Any = None, for_update: bool = False
) -> EvidenceSet:
    """The actor's evidence set with this ref, looked up among the Dimensions where the
    actor holds a role (the one named `dimension` when given): refs are unique per
    Dimension, so another Dimension's set of the same ref is another resource, and a
    set of a Dimension where the actor holds no role is `not_found` by the same
    statement as a ref no set has (API.md "Tenancy").

    A ref held by sets of several of the actor's Dimensions is `400
    dimension_required` until `dimension` (the route's `?dimension=`) names one.
    `for_update` locks the row (a change of the set queues behind another).
    """
    # No set can hold a ref with control characters or dot segments (creation refuses
    # them), and the database cannot even be asked about U+0000: such a ref names nothing.
    if not isinstance(ref, str) or control_offenders(ref, "/evidence_set_ref"):
        raise Refusal("not_found", "no evidence set of yours has this ref.")
    held = memberships(actor).dimensions
    if dimension is not None and dimension != "":
        ids = sorted(pk for pk, d in held.items() if d.name == dimension)
    else:
        ids = sorted(held)
    sets = EvidenceSet.objects.select_related("dimension").filter(
        evidence_set_ref=ref, dimension_id__in=ids
    )
    if for_update:
        sets = sets.select_for_update(of=("self",))
    found = list(sets.order_by("dimension_id")[:2])
    if not found:
        raise Refusal("not_found", "no evidence set of yours has this ref.")
    if len(found) > 1:
        raise Refusal(
            "dimension_required",
            "evidence sets of several of your Dimensions have this ref: "
            "name one with ?dimension=<name>.",
        )
    return found[0]
