"""Change notifications (API.md "Change notifications"): post one, list them, read one
with the links it sent back to review. Curators and stewards of the Dimension."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse

from grounding import services
from grounding.api import examples
from grounding.api.schema import operation
from grounding.api.views import ApiView
from grounding.choices import ChangeKind
from grounding.models import ChangeNotification
from grounding.services.changes import NOTIFYING_ROLES
from grounding.values.timestamps import parse_rfc3339
from policies.kernel.refusals import Offender, Refusal
from policies.services import dimensions_with_roles, roles_of
from policies.web.pagination import CursorPagination

TAGS = ("change-notifications",)
_ROLES = {str(r) for r in NOTIFYING_ROLES}


class ChangeNotificationRequestSerializer(serializers.Serializer):
    dimension = serializers.CharField()
    change_ref = serializers.CharField()
    kind = serializers.ChoiceField(
        choices=[ChangeKind.SOURCE, ChangeKind.ANSWER, ChangeKind.POLICY, ChangeKind.ASSESSMENT]
    )
    subject_ref = serializers.CharField()
    observed_at = serializers.DateTimeField()
    reason = serializers.CharField()


class AffectedLinkSerializer(serializers.Serializer):
    grounding_id = serializers.UUIDField()
    revision = serializers.IntegerField()


class ChangeNotificationSerializer(serializers.Serializer):
    notification_id = serializers.UUIDField()
    dimension = serializers.CharField()
    change_ref = serializers.CharField()
    kind = serializers.ChoiceField(choices=ChangeKind.choices)
    subject_ref = serializers.CharField()
    observed_at = serializers.DateTimeField(allow_null=True)
    reason = serializers.CharField()
    recorded_at = serializers.DateTimeField()
    completed = serializers.BooleanField()
    affected = serializers.IntegerField()
    links = AffectedLinkSerializer(many=True, required=False)


def document(notification: ChangeNotification, *, links: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "notification_id": str(notification.notification_id),
        "dimension": notification.dimension.name,
        "change_ref": notification.change_ref,
        "kind": notification.kind,
        "subject_ref": notification.subject_ref,
        "observed_at": _instant(notification.observed_at),
        "reason": notification.reason,
        "recorded_at": _instant(notification.recorded_at),
        "completed": notification.completed_at is not None,
        "affected": notification.affected,
    }
    if links:
        rows = notification.affected_links.order_by("link_id").values_list("link_id", "revision")
        body["links"] = [{"grounding_id": str(g), "revision": r} for g, r in rows]
    return body


def _instant(value) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


class ChangeNotificationPagination(CursorPagination):
    ordering = "-notification_id"  # UUIDv7: time-ordered and unique
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


def _readable(user) -> QuerySet[ChangeNotification]:
    dimensions = [d.pk for d in dimensions_with_roles(user) if roles_of(user, d) & _ROLES]
    return ChangeNotification.objects.select_related("dimension").filter(
        dimension_id__in=dimensions
    )


LIST_FILTERS = [
    OpenApiParameter("dimension", str, required=False),
    OpenApiParameter("kind", str, enum=ChangeKind.values, required=False),
    OpenApiParameter("subject_ref", str, required=False),
    OpenApiParameter("change_ref", str, required=False),
    *(
        OpenApiParameter(name, OpenApiTypes.DATETIME, required=False, description=text)
        for name, text in (
            ("observed_after", "observed_at ≥ this RFC 3339 date-time."),
            ("observed_before", "observed_at < this RFC 3339 date-time."),
        )
    ),
]


class ChangeNotificationListView(ApiView):
    pagination_class = ChangeNotificationPagination

    @operation(
        summary="Record a change notification and send the links it affects to review",
        request=ChangeNotificationRequestSerializer,
        examples=[examples.CHANGE_NOTIFICATION],
        responses={200: ChangeNotificationSerializer, 201: ChangeNotificationSerializer},
        errors=(404, 409),
        etag=False,
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        outcome = services.notify_change(actor=request.user, payload=request.data)
        notification = outcome.notification
        headers = {
            "Location": reverse(
                "grounding_api:change-notification-detail",
                kwargs={"notification_id": notification.notification_id},
                request=request,
            )
        }
        code = status.HTTP_201_CREATED if outcome.created else status.HTTP_200_OK
        return Response(document(notification), status=code, headers=headers)

    @operation(
        summary="List change notifications, newest first",
        responses={200: ChangeNotificationSerializer(many=True)},
        errors=(400, 404),
        parameters=LIST_FILTERS,
        etag=False,
        tags=TAGS,
        operation_id="change_notifications_list",
    )
    def get(self, request: Request) -> Response:
        queryset = _filtered(_readable(request.user), request.query_params)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(queryset, request, view=self)
        return paginator.get_paginated_response([document(n, links=False) for n in page])


def _filtered(queryset: QuerySet[ChangeNotification], params) -> QuerySet[ChangeNotification]:
    offenders = []
    if params.get("dimension"):
        queryset = queryset.filter(dimension__name=params["dimension"])
    if params.get("kind"):
        if params["kind"] not in ChangeKind.values:
            offenders.append(Offender("/query/kind", "enum", "unknown kind."))
        queryset = queryset.filter(kind=params["kind"])
    if params.get("subject_ref"):
        queryset = queryset.filter(subject_ref=params["subject_ref"])
    if params.get("change_ref"):
        queryset = queryset.filter(change_ref=params["change_ref"])
    for key, lookup in (("observed_after", "gte"), ("observed_before", "lt")):
        if params.get(key):
            instant = parse_rfc3339(params[key])
            if instant is None:
                offenders.append(
                    Offender(f"/query/{key}", "format", f"{key} must be an RFC 3339 date-time.")
                )
            else:
                queryset = queryset.filter(**{f"observed_at__{lookup}": instant})
    if offenders:
        raise Refusal("validation_error", "the query is not valid.", offenders=offenders)
    return queryset


class ChangeNotificationDetailView(ApiView):
    @operation(
        summary="Read a change notification with the links it sent to review",
        responses={200: ChangeNotificationSerializer},
        errors=(404,),
        etag=False,
        tags=TAGS,
        operation_id="change_notifications_read",
    )
    def get(self, request: Request, notification_id: uuid.UUID) -> Response:
        notification = (
            ChangeNotification.objects.select_related("dimension")
            .filter(pk=notification_id)
            .first()
        )
        if notification is None or not roles_of(request.user, notification.dimension):
            raise Refusal("not_found", "no change notification has this id.")
        if not roles_of(request.user, notification.dimension) & _ROLES:
            raise Refusal("role_required", "reading needs the curator or steward role.")
        return Response(document(notification))
