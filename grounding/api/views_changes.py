"""Change notifications (API.md "Change notifications"): post one, list them, read one
with the links it sent back to review. Curators and stewards of the Dimension. The
answers' serializers are `grounding.api.serializers_changes`; the request body is
declared in `grounding.bodies`."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import QuerySet
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse

from common.kernel.refusals import Offender, Refusal
from common.web.pagination import CursorPagination
from common.web.views import ApiView
from grounding.api import examples
from grounding.api.serializers_changes import ChangeNotificationSerializer
from grounding.choices import ChangeKind
from grounding.models import ChangeNotification
from grounding.services.changes import NOTIFY_CHANGE, NOTIFYING_ROLES, Outcome
from grounding.values.timestamps import parse_rfc3339
from policies.operations import Operation, Param
from policies.services import dimensions_with_roles, roles_of

_ROLES = {str(r) for r in NOTIFYING_ROLES}


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


READ_CHANGE_NOTIFICATIONS = Operation(
    "read_change_notification",
    output=ChangeNotificationSerializer,
    many=True,
    roles=NOTIFYING_ROLES,
    # A filter or page_size that does not parse; a cursor that names no position.
    refusals=("validation_error", "not_found"),
    query=(
        Param("dimension"),
        Param("kind", {"type": "string", "enum": sorted(ChangeKind.values)}),
        Param("subject_ref"),
        Param("change_ref"),
        *(
            Param(name, {"type": "string", "format": "date-time"}, description=text)
            for name, text in (
                ("observed_after", "observed_at ≥ this RFC 3339 date-time."),
                ("observed_before", "observed_at < this RFC 3339 date-time."),
            )
        ),
    ),
    summary="List change notifications, newest first",
    operation_id="change_notifications_list",
)
READ_CHANGE_NOTIFICATION = Operation(
    "read_change_notification",
    output=ChangeNotificationSerializer,
    roles=NOTIFYING_ROLES,
    refusals=("not_found", "role_required"),
    summary="Read a change notification with the links it sent to review",
    operation_id="change_notifications_read",
)


class ChangeNotificationListView(ApiView):
    pagination_class = ChangeNotificationPagination
    operations = {"get": READ_CHANGE_NOTIFICATIONS, "post": NOTIFY_CHANGE}
    examples = {"post": [examples.CHANGE_NOTIFICATION]}

    def post(self, request: Request) -> Response:
        # The answer is rendered in the notification's last transaction (the one that
        # completes it): the first one's result says whether it was created.
        created: list[bool] = []

        def render(result: tuple[Any, Any]) -> Response | None:
            head, _cursor = result
            if isinstance(head, Outcome):
                created.append(head.created)
                head = head.notification
            if head.completed_at is None:
                return None
            headers = {
                "Location": reverse(
                    "grounding_api:change-notification-detail",
                    kwargs={"notification_id": head.notification_id},
                    request=request,
                )
            }
            code = status.HTTP_201_CREATED if created[-1] else status.HTTP_200_OK
            body = ChangeNotificationSerializer(head).data
            return Response(body, status=code, headers=headers)

        return self.perform(render, payload=request.data)

    def get(self, request: Request) -> Response:
        queryset = _filtered(_readable(request.user), request.query_params)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(queryset, request, view=self)
        listed = ChangeNotificationSerializer(page, many=True, context={"links": False})
        return paginator.get_paginated_response(listed.data)


def _filtered(queryset: QuerySet[ChangeNotification], params) -> QuerySet[ChangeNotification]:
    offenders = []
    # As the schema says: free text without U+0000 (no column holds it; PostgreSQL
    # cannot even be asked), and a typed filter (an enum, a date-time) not empty.
    for key in ("dimension", "subject_ref", "change_ref"):
        if "\x00" in params.get(key, ""):
            offenders.append(Offender(f"/query/{key}", "unstorable_character", "U+0000."))
    for key in ("kind", "observed_after", "observed_before"):
        if params.get(key) == "":
            offenders.append(Offender(f"/query/{key}", "blank", f"{key} may not be empty."))
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
    operation = READ_CHANGE_NOTIFICATION

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
        return Response(ChangeNotificationSerializer(notification).data)
