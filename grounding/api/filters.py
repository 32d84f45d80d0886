"""List filters (API.md "Lists"). Which links a list may hold at all is the
reader's business (`policies.reader`)."""

from __future__ import annotations

import django_filters

from grounding.choices import RecheckState, RecordState, SupportKind
from grounding.models import GroundingLink
from policies.api.pagination import CursorPagination

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
