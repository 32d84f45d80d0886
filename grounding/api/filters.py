"""List filters (API.md "Lists") and the reader's scope: a list holds only links
some disclosure decision lets the reader see."""

from __future__ import annotations

import django_filters
from django.db.models import Q, QuerySet
from rest_framework.pagination import CursorPagination

from grounding.choices import RecheckState, RecordState, SupportKind
from grounding.models import GroundingLink
from grounding.projection import DecisionCache, readers_for_user
from policies.services import dimensions_with_roles

# Filters that match on a disclosable group: a link whose group is withheld from
# the reader is left out, so the filter cannot be used to probe withheld values.
FILTER_GROUPS = {
    "statement_ref": "statement",
    "answer_revision_ref": "statement",
    "support_kind": "support",
}


class LinkFilter(django_filters.FilterSet):
    dimension = django_filters.CharFilter(field_name="dimension__name")
    record_state = django_filters.ChoiceFilter(choices=RecordState.choices)
    recheck_state = django_filters.ChoiceFilter(choices=RecheckState.choices)
    statement_ref = django_filters.CharFilter(field_name="current_statement__statement_ref")
    answer_revision_ref = django_filters.CharFilter(
        field_name="current_statement__answer_revision_ref"
    )
    passage_id = django_filters.UUIDFilter(field_name="current_passage__passage_id")
    support_kind = django_filters.ChoiceFilter(choices=SupportKind.choices)
    # The review queue: links a given change notification sent back to review.
    change_ref = django_filters.CharFilter(field_name="change_ref")

    class Meta:
        model = GroundingLink
        fields = [
            "dimension",
            "record_state",
            "recheck_state",
            "statement_ref",
            "answer_revision_ref",
            "passage_id",
            "support_kind",
            "change_ref",
        ]


class LinkCursorPagination(CursorPagination):
    # grounding_id is a UUIDv7: unique and time-ordered, so cursors are stable.
    ordering = "-grounding_id"
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


def readable_by(user, queryset: QuerySet[GroundingLink], cache: DecisionCache) -> QuerySet:
    """Restrict to links a decision covers for one of the user's roles.

    A decision without grounding_ids covers its whole Dimension; one with
    grounding_ids covers those links. Decisions are fetched once per Dimension and
    role (cached for the rendering that follows), never per link.
    """
    scope = Q(pk__in=[])
    for dimension in dimensions_with_roles(user):
        listed: set[str] = set()
        for reader in readers_for_user(user, dimension):
            for decision in cache.decisions(dimension, reader):
                if decision.grounding_ids is None:
                    scope |= Q(dimension_id=dimension.pk)
                else:
                    listed |= {str(g) for g in decision.grounding_ids}
        if listed:
            scope |= Q(dimension_id=dimension.pk, pk__in=_uuids(listed))
    return queryset.filter(scope)


def _uuids(values: set[str]) -> list:
    import uuid

    out = []
    for value in values:
        try:
            out.append(uuid.UUID(value))
        except ValueError:
            continue
    return out
