"""GET /api/v1/audit-events/: read-only, for the stewards of the Dimensions the
events belong to. Events carry references only, never protected source text."""

from __future__ import annotations

import django_filters
from django.db.models import QuerySet
from django_filters.utils import translate_validation
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from common.web.filters import TypedFilterSet
from common.web.pagination import CursorPagination
from common.web.views import ApiView
from policies.audit import STEWARD_ROLES, events_visible_to
from policies.choices import AuditOutcome
from policies.models import AuditEvent
from policies.operations import Operation, Param

# PositiveIntegerField's range on every database (SQLite's is wider): the schema
# states one bound, the same on SQLite and PostgreSQL.
REVISION_MAX = 2_147_483_647


class AuditEventSerializer(serializers.ModelSerializer):
    dimension = serializers.CharField(source="dimension_ref")
    expected_revision = serializers.IntegerField(
        min_value=0, max_value=REVISION_MAX, allow_null=True, required=False
    )
    resulting_revision = serializers.IntegerField(
        min_value=0, max_value=REVISION_MAX, allow_null=True, required=False
    )
    references = serializers.DictField(
        help_text="Identifiers the operation named (never source text); keys vary by action."
    )

    class Meta:
        model = AuditEvent
        fields = [
            "event_id",
            "occurred_at",
            "actor_ref",
            "action",
            "outcome",
            "code",
            "grounding_id",
            "dimension",
            "expected_revision",
            "resulting_revision",
            "decision_ref",
            "request_id",
            "references",
        ]


class AuditEventFilter(TypedFilterSet):
    grounding_id = django_filters.UUIDFilter()
    link = django_filters.UUIDFilter(field_name="grounding_id")
    actor = django_filters.CharFilter(method="filter_actor")
    action = django_filters.CharFilter()
    outcome = django_filters.ChoiceFilter(choices=AuditOutcome.choices)
    code = django_filters.CharFilter()
    dimension = django_filters.CharFilter(field_name="dimension_ref")

    class Meta:
        model = AuditEvent
        fields: list[str] = []

    def filter_actor(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        # Accept "user:alice" as stored, or the bare username.
        ref = value if value.startswith(("user:", "anonymous")) else f"user:{value}"
        return queryset.filter(actor_ref=ref)


class AuditCursorPagination(CursorPagination):
    ordering = ("-occurred_at", "-event_id")
    # The same page sizes as the other lists.
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


READ_AUDIT_EVENTS = Operation(
    "read_audit_events",
    output=AuditEventSerializer,
    many=True,
    roles=STEWARD_ROLES,
    # A filter or page_size that does not parse; a cursor that names no position;
    # a caller who stewards no Dimension.
    refusals=("validation_error", "not_found", "role_required"),
    query=(
        Param("grounding_id", {"type": "string", "format": "uuid"}),
        Param("link", {"type": "string", "format": "uuid"}, description="Same as grounding_id."),
        Param("actor", description='"user:alice" or "alice".'),
        Param("outcome", {"type": "string", "enum": sorted(AuditOutcome.values)}),
        Param("action"),
        Param("code"),
        Param("dimension"),
    ),
    summary="Audit events (stewards; read-only)",
    operation_id="audit_events_list",
    tags=("audit",),
)


class AuditEventListView(ApiView):
    filterset_class = AuditEventFilter
    pagination_class = AuditCursorPagination
    operation = READ_AUDIT_EVENTS

    def get(self, request: Request) -> Response:
        queryset = events_visible_to(request.user)
        filterset = self.filterset_class(request.query_params, queryset=queryset)
        if not filterset.is_valid():
            # An offender per filter, as the other lists' filters (DjangoFilterBackend).
            raise translate_validation(filterset.errors)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(filterset.qs, request, view=self)
        return paginator.get_paginated_response(AuditEventSerializer(page, many=True).data)
