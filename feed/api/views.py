"""The feed's routes: webhook subscriptions (stewards), their delivery attempts and
replays, and the stream (members). Thin: feed.services decide, feed.stream reads."""

from __future__ import annotations

import re

from django.core.handlers.asgi import ASGIRequest
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse
from rest_framework import status
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from common.kernel.refusals import Offender, Refusal
from common.web.pagination import CursorPagination
from common.web.views import ApiView
from feed import selectors, services, stream
from feed.api.serializers import AttemptSerializer, EventPageSerializer, WebhookSerializer
from policies.operations import Operation, Param
from policies.services import dimension_for

EVENT_STREAM = "text/event-stream"
_LIMIT = re.compile(r"[1-9][0-9]{0,3}")

READ_WEBHOOKS = Operation(
    "read_webhooks",
    output=WebhookSerializer,
    many=True,
    refusals=("role_required",),
    summary="Webhooks of the Dimensions you steward",
    operation_id="webhooks_list",
    tags=("events",),
)
READ_WEBHOOK = Operation(
    "read_webhooks",
    output=WebhookSerializer,
    refusals=("not_found", "role_required"),
    summary="A webhook (steward of its Dimension)",
    operation_id="webhooks_read",
    tags=("events",),
)
READ_DELIVERIES = Operation(
    "read_webhooks",
    output=AttemptSerializer,
    many=True,
    # A page_size that does not parse; a cursor that names no position.
    refusals=("validation_error", "not_found", "role_required"),
    summary="A webhook's delivery attempts, newest first (steward)",
    operation_id="webhook_deliveries_list",
    tags=("events",),
)
READ_EVENTS = Operation(
    "read_events",
    output={
        (200, "application/json"): OpenApiResponse(EventPageSerializer),
        (200, EVENT_STREAM): OpenApiResponse(
            OpenApiTypes.STR,
            description="An event stream: each event's `id:` its cursor, `event:` its type "
            "and `data:` the CloudEvent JSON. `Last-Event-ID` resumes after a cursor.",
        ),
    },
    refusals=("validation_error", "not_found", "invalid_cursor"),
    query=(
        Param("dimension", {"type": "string", "minLength": 1, "maxLength": 63}, required=True),
        Param("after", description="Resume after this cursor (a forged or stale one is 400)."),
        Param(
            "limit",
            {"type": "integer", "minimum": 1, "maximum": stream.PAGE_MAX},
            description=f"Events per page (default {stream.PAGE_DEFAULT}).",
        ),
    ),
    summary="A Dimension's events in log order (its members): a JSON page, or "
    "text/event-stream resumed with Last-Event-ID",
    operation_id="events_list",
    tags=("events",),
)


class EventStreamRenderer(BaseRenderer):
    """Lets content negotiation accept text/event-stream; the stream itself is a
    StreamingHttpResponse, never rendered."""

    media_type = EVENT_STREAM
    format = "sse"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return b""


class WebhookListView(ApiView):
    operations = {"get": READ_WEBHOOKS, "post": services.CREATE_WEBHOOK}

    def get(self, request: Request) -> Response:
        webhooks = selectors.webhooks_for(request.user)
        return Response(WebhookSerializer(webhooks, many=True).data)

    def post(self, request: Request) -> Response:
        return self.perform(
            lambda created: Response(
                {**WebhookSerializer(created.webhook).data, "secret": created.secret},
                status=status.HTTP_201_CREATED,
            ),
            **self.validated(),
        )


class WebhookDetailView(ApiView):
    operations = {
        "get": READ_WEBHOOK,
        "patch": services.CHANGE_WEBHOOK,
        "delete": services.DELETE_WEBHOOK,
    }

    def get(self, request: Request, webhook_id) -> Response:
        webhook = selectors.webhook_of(request.user, webhook_id)
        return Response(WebhookSerializer(webhook).data)

    def patch(self, request: Request, webhook_id) -> Response:
        values = self.validated()
        return self.perform(
            lambda webhook: Response(WebhookSerializer(webhook).data),
            webhook_id=webhook_id,
            active=values["active"],
        )

    def delete(self, request: Request, webhook_id) -> Response:
        return self.perform(
            lambda _: Response(status=status.HTTP_204_NO_CONTENT), webhook_id=webhook_id
        )


class AttemptPagination(CursorPagination):
    ordering = ("-n",)


class DeliveryListView(ApiView):
    operation = READ_DELIVERIES
    pagination_class = AttemptPagination

    def get(self, request: Request, webhook_id) -> Response:
        webhook = selectors.webhook_of(request.user, webhook_id)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(selectors.attempts_of(webhook), request, view=self)
        return paginator.get_paginated_response(AttemptSerializer(page, many=True).data)


class DeliveryRetryView(ApiView):
    operation = services.RETRY_DELIVERY

    def post(self, request: Request, webhook_id, n: str) -> Response:
        return self.perform(
            lambda delivery: Response(
                {
                    "n": int(n),
                    "event_id": str(delivery.event.event_id),
                    "delivery_state": delivery.state,
                    "due_at": delivery.due_at.isoformat().replace("+00:00", "Z"),
                },
                status=status.HTTP_202_ACCEPTED,
            ),
            webhook_id=webhook_id,
            n=n,
        )


class EventListView(ApiView):
    operation = READ_EVENTS
    renderer_classes = [*ApiView.renderer_classes, EventStreamRenderer]

    def get(self, request: Request):
        name = request.query_params.get("dimension")
        if not name:
            raise Refusal(
                "validation_error",
                "name the Dimension: ?dimension=<name>.",
                offenders=[Offender("/query/dimension", "required", "dimension is required.")],
            )
        dimension = dimension_for(request.user, name)
        header = request.headers.get("Last-Event-ID")
        if header:
            after = stream.position_of(header, dimension, "/headers/Last-Event-ID")
        elif request.query_params.get("after"):
            after = stream.position_of(request.query_params["after"], dimension, "/query/after")
        else:
            after = None
        if request.accepted_renderer.media_type == EVENT_STREAM:
            return self._stream(request, dimension, after)
        limit = _limit(request.query_params.get("limit"))
        found = stream.page(dimension, after, limit)
        following = found[-1][0] if found else (request.query_params.get("after") or header)
        return Response({"events": [doc for _, doc in found], "next": following or None})

    def _stream(self, request: Request, dimension, after) -> StreamingHttpResponse:
        if isinstance(request._request, ASGIRequest):
            content = stream.asgi_stream(dimension, after)
        else:
            content = stream.wsgi_stream(dimension, after)
        response = StreamingHttpResponse(content, content_type=EVENT_STREAM)
        response["Cache-Control"] = "no-store"
        response["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
        return response


def _limit(raw: str | None) -> int:
    if raw is None:
        return stream.PAGE_DEFAULT
    if not _LIMIT.fullmatch(raw) or int(raw) > stream.PAGE_MAX:
        raise Refusal(
            "validation_error",
            "the query is not valid.",
            offenders=[Offender("/query/limit", "range",
                                f"limit is an integer from 1 to {stream.PAGE_MAX}.")],
        )  # fmt: skip
    return int(raw)
