"""List filters (API.md "Lists"). Which links a list may hold at all is the
reader's business (`policies.reader`)."""

from __future__ import annotations

import uuid

import django_filters
from django.core.exceptions import ValidationError
from django.db import connection, models
from django.db.models import F, Func, QuerySet, Subquery
from django.db.models.fields.tuple_lookups import TupleGreaterThan, TupleLessThan
from django_filters.constants import EMPTY_VALUES
from rest_framework.exceptions import NotFound

from common.web.filters import TypedFilterSet
from common.web.pagination import CursorPagination, reversed_ordering
from grounding.choices import DisplayState, RecheckState, RecordState, SupportKind
from grounding.models import GroundingLink
from grounding.selectors import member_dimension_ids

# `ordering`: a closed allow-list, each with grounding_id (unique, UUIDv7) as the
# tie-breaker, so a cursor names one exact position whatever the ties.
ORDERINGS: dict[str, tuple[str, ...]] = {
    "-grounding_id": ("-grounding_id",),
    "grounding_id": ("grounding_id",),
    "-observed_at": ("-observed_at", "-grounding_id"),
    "observed_at": ("observed_at", "grounding_id"),
    "-revision": ("-revision", "-grounding_id"),
    "revision": ("revision", "grounding_id"),
}
DEFAULT_ORDERING = "-grounding_id"
ORDERING_HELP = (
    "Order of the list (default -grounding_id: newest registered first); "
    "ties are broken by grounding_id in the same direction."
)

# Filters that match on a disclosable group: a link whose group is withheld from
# the reader is left out, so the filter cannot be used to probe withheld values.
# (passage_id, the states and change_ref are shown to every reader of a link.)
FILTER_GROUPS = {
    "statement_ref": "statement",
    "answer_revision_ref": "statement",
    "support_kind": "support",
}


class _Shown:
    """A filter on a value a disposed link no longer shows: its tombstone holds only
    grounding_id, revision, record_state, dimension, receipt and policy refs and times
    (API.md "The link as read"), so a disposed link never matches a filter on
    anything else, whatever it hid."""

    def filter(self, queryset: QuerySet, value):
        filtered = super().filter(queryset, value)  # type: ignore[misc]
        if value in EMPTY_VALUES:
            return filtered
        return filtered.exclude(record_state=RecordState.DISPOSED)


class ShownCharFilter(_Shown, django_filters.CharFilter):
    pass


class ShownChoiceFilter(_Shown, django_filters.ChoiceFilter):
    pass


class ShownUUIDFilter(_Shown, django_filters.UUIDFilter):
    pass


class LinkFilter(TypedFilterSet):
    # What a tombstone shows: a disposed link is found by these.
    dimension = django_filters.CharFilter(field_name="dimension__name")
    record_state = django_filters.ChoiceFilter(choices=RecordState.choices)
    # What only a live link shows.
    recheck_state = ShownChoiceFilter(choices=RecheckState.choices)
    statement_ref = ShownCharFilter(field_name="current_statement__statement_ref")
    answer_revision_ref = ShownCharFilter(field_name="current_statement__answer_revision_ref")
    passage_id = ShownUUIDFilter(field_name="current_passage__passage_id")
    support_kind = ShownChoiceFilter(choices=SupportKind.choices)
    display_state = ShownChoiceFilter(choices=DisplayState.choices)
    # Validated here (a value outside the allow-list is a 400 naming /ordering);
    # applied by the cursor pagination, which must know the order it pages over.
    ordering = django_filters.ChoiceFilter(
        choices=[(k, k) for k in ORDERINGS],
        method="_ordered_by_pagination",
        help_text=ORDERING_HELP,
    )
    # The review queue: links a given change notification sent back to review.
    change_ref = ShownCharFilter(field_name="change_ref")

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
            "display_state",
            "change_ref",
        ]

    def _ordered_by_pagination(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset


class _AmongKeys(Func):
    """`pk = ANY(ARRAY(keys))`: the keys are read first (an InitPlan) and the page
    looked up by primary key. As `pk IN (keys)` the planner joined the keys to a scan
    of the whole table."""

    arg_joiner = " = ANY(ARRAY"
    template = "%(expressions)s)"
    output_field = models.BooleanField()


def page_rows(queryset: QuerySet, dimension_ids: list[int], start: int, stop: int) -> list:
    """Rows [start:stop] of the ordered `queryset`, of the Dimensions `dimension_ids`.

    Within one Dimension a (dimension, ordering…) index gives the rows in order. The
    links of several Dimensions (a reader holding roles in more than one, the scope an
    OR of them) are in order in no index but the primary key's, so every other ordering
    sorted all their links: on PostgreSQL each Dimension's first `stop` keys are read
    from its index (a UNION ALL of index walks) and the page is taken among them. The
    same rows either way: each branch is the queryset within one of the Dimensions.
    """
    if len(dimension_ids) < 2 or not connection.features.supports_slicing_ordering_in_compound:
        return list(queryset[start:stop])
    ordering = queryset.query.order_by
    first, *rest = (
        queryset.filter(dimension_id=pk)
        .prefetch_related(None)
        .order_by(*ordering)
        .values("pk")[:stop]
        for pk in dimension_ids
    )
    keys = Subquery(first.union(*rest, all=True))
    return list(queryset.filter(_AmongKeys(F("pk"), keys))[start:stop])


class LinkCursorPagination(CursorPagination):
    """Cursor pages over one of the allowed orderings.

    DRF's cursor is the value of the first ordering column plus an offset among its
    ties (capped at 1,000, past which pages repeat). Here a cursor over a non-unique
    column carries the row's grounding_id as well, and the page starts strictly after
    (value, grounding_id): exact however many links share a value.

    A cursor names the ordering it was made for (`<ordering>|<position>`): sent with
    another ordering, even the same column the other way, it names no position there
    and is 404 not_found, as is a position its column cannot read (docs/api.md "Lists").
    """

    # grounding_id is a UUIDv7: unique and time-ordered, so cursors are stable.
    ordering = DEFAULT_ORDERING
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200

    def get_ordering(self, request, queryset, view) -> tuple[str, ...]:
        chosen = request.query_params.get("ordering") or DEFAULT_ORDERING
        self.ordering_name = chosen if chosen in ORDERINGS else DEFAULT_ORDERING
        return ORDERINGS[self.ordering_name]

    def position_of(self, instance, ordering) -> str:
        if len(ordering) == 1:
            text = super().position_of(instance, ordering)
        else:
            value = getattr(instance, ordering[0].lstrip("-"))
            shown = value.isoformat() if hasattr(value, "isoformat") else str(value)
            text = f"{shown}|{instance.pk}"
        return f"{self.ordering_name}|{text}"

    def _own_position(self, position: str) -> str:
        """The position a cursor of this ordering names; 404 for another ordering's."""
        name, mark, rest = position.partition("|")
        if not mark or name != self.ordering_name:
            raise NotFound(self.invalid_cursor_message)
        return rest

    def _after(self, queryset: QuerySet, position: str, below: bool) -> QuerySet:
        """Rows strictly past `position` in the paging direction."""
        order = self.ordering[0].lstrip("-")
        op = "lt" if below else "gt"
        if len(self.ordering) == 1:  # grounding_id's own, both ways
            try:
                key = uuid.UUID(position)
            except ValueError as exc:
                raise NotFound(self.invalid_cursor_message) from exc
            return queryset.filter(**{f"{order}__{op}": key})
        value_text, _, key_text = position.rpartition("|")
        try:
            value = GroundingLink._meta.get_field(order).to_python(value_text)
            key = uuid.UUID(key_text)
        except (ValidationError, ValueError) as exc:
            raise NotFound(self.invalid_cursor_message) from exc
        if value is None:
            raise NotFound(self.invalid_cursor_message)
        # (value, grounding_id) past (value, key) as one row comparison: PostgreSQL
        # starts the walk of the (dimension, column, grounding_id) index there. Written
        # as `column < value OR (column = value AND grounding_id < key)` it is only a
        # filter, and a page deep in the list walks every row before it (a third of a
        # large Dimension shares each revision). SQLite is sent that OR form.
        past = TupleLessThan if below else TupleGreaterThan
        return queryset.filter(past((F(order), F("grounding_id")), (value, key)))

    def paginate_queryset(self, queryset, request, view=None):
        # DRF's CursorPagination.paginate_queryset, with the position filter in `_after`.
        self.request = request
        self.page_size = self.get_page_size(request)
        if not self.page_size:
            return None
        self.base_url = request.build_absolute_uri()
        self.ordering = self.get_ordering(request, queryset, view)
        self.cursor = self.decode_cursor(request)
        if self.cursor is None:
            offset, reverse, current_position = 0, False, None
        else:
            offset, reverse, current_position = self.cursor
        if reverse:
            queryset = queryset.order_by(*reversed_ordering(self.ordering))
        else:
            queryset = queryset.order_by(*self.ordering)
        if current_position is not None:
            is_reversed = self.ordering[0].startswith("-")
            queryset = self._after(
                queryset, self._own_position(current_position), self.cursor.reverse != is_reversed
            )
        dimension_ids = member_dimension_ids(request.user)
        results = page_rows(queryset, dimension_ids, offset, offset + self.page_size + 1)
        self.page = list(results[: self.page_size])
        if len(results) > len(self.page):
            has_following_position = True
            following_position = self.position_of(results[-1], self.ordering)
        else:
            has_following_position = False
            following_position = None
        if reverse:
            self.page = list(reversed(self.page))
            self.has_next = (current_position is not None) or (offset > 0)
            self.has_previous = has_following_position
            if self.has_next:
                self.next_position = current_position
            if self.has_previous:
                self.previous_position = following_position
        else:
            self.has_next = has_following_position
            self.has_previous = (current_position is not None) or (offset > 0)
            if self.has_next:
                self.next_position = following_position
            if self.has_previous:
                self.previous_position = current_position
        if (self.has_previous or self.has_next) and self.template is not None:
            self.display_page_controls = True
        return self.page
