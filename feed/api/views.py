"""The feed's routes: webhook subscriptions (stewards), their delivery attempts and
replays, and the stream (members). Thin: feed.services decide, feed.stream reads."""

from __future__ import annotations

import re

from django.core.handlers.asgi import ASGIRequest
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import status
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from feed import selectors, services, stream
from feed.api.serializers import (
    AttemptSerializer,
    EventPageSerializer,
    RetriedSerializer,
    WebhookChangeSerializer,
    WebhookCreatedSerializer,
    WebhookInputSerializer,
    WebhookSerializer,
)
from policies.kernel.refusals import Offender, Refusal
from policies.services import dimension_for
from policies.web.openapi import api_operation
from policies.web.pagination import CursorPagination
from policies.web.views import ApiView

EVENT_STREAM = "text/event-stream"
_LIMIT = re.compile(r"[1-9][0-9]{0,3}")


class EventStreamRenderer(BaseRenderer):
    """Lets content negotiation accept text/event-stream; the stream itself is a
    StreamingHttpResponse, never rendered."""

    media_type = EVENT_STREAM
    format = "sse"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return b""


class WebhookListView(ApiView):
    @api_operation(
        summary="Webhooks of the Dimensions you steward",
        operation_id="webhooks_list",
        responses={200: WebhookSerializer(many=True)},
        tags=["events"],
    )
    def get(self, request: Request) -> Response:
        webhooks = selectors.webhooks_for(request.user)
        return Response(WebhookSerializer(webhooks, many=True).data)

    @api_operation(
        summary="Subscribe a receiver to a Dimension's events (steward); the secret, once",
        request=WebhookInputSerializer,
        responses={201: WebhookCreatedSerializer},
        errors=(404,),
        tags=["events"],
    )
    def post(self, request: Request) -> Response:
        values = self.validated(WebhookInputSerializer)
        return self.answer(
            lambda: services.create_webhook(actor=request.user, **values),
            lambda created: Response(
                {**WebhookSerializer(created.webhook).data, "secret": created.secret},
                status=status.HTTP_201_CREATED,
            ),
        )


class WebhookDetailView(ApiView):
    @api_operation(
        summary="A webhook (steward of its Dimension)",
        operation_id="webhooks_read",
        responses={200: WebhookSerializer},
        errors=(404,),
        tags=["events"],
    )
    def get(self, request: Request, webhook_id) -> Response:
        webhook = selectors.webhook_of(request.user, webhook_id)
        return Response(WebhookSerializer(webhook).data)

    @api_operation(
        summary="Turn a webhook on (again, after a 410) or off",
        request=WebhookChangeSerializer,
        responses={200: WebhookSerializer},
        errors=(404,),
        tags=["events"],
    )
    def patch(self, request: Request, webhook_id) -> Response:
        values = self.validated(WebhookChangeSerializer)
        return self.answer(
            lambda: services.change_webhook(
                actor=request.user, webhook_id=webhook_id, active=values["active"]
            ),
            lambda webhook: Response(WebhookSerializer(webhook).data),
        )

    @api_operation(
        summary="Delete a webhook: no longer shown, nothing more delivered to it",
        responses={204: None},
        errors=(404,),
        tags=["events"],
    )
    def delete(self, request: Request, webhook_id) -> Response:
        return self.answer(
            lambda: services.delete_webhook(actor=request.user, webhook_id=webhook_id),
            lambda _: Response(status=status.HTTP_204_NO_CONTENT),
        )


class AttemptPagination(CursorPagination):
    ordering = ("-n",)


class DeliveryListView(ApiView):
    pagination_class = AttemptPagination

    @api_operation(
        summary="A webhook's delivery attempts, newest first (steward)",
        operation_id="webhook_deliveries_list",
        responses={200: AttemptSerializer(many=True)},
        errors=(400, 404),
        tags=["events"],
    )
    def get(self, request: Request, webhook_id) -> Response:
        webhook = selectors.webhook_of(request.user, webhook_id)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(selectors.attempts_of(webhook), request, view=self)
        return paginator.get_paginated_response(AttemptSerializer(page, many=True).data)


class DeliveryRetryView(ApiView):
    @api_operation(
        summary="Replay attempt n's event to the webhook (same webhook-id), as soon as a "
        "delivery worker can",
        responses={202: RetriedSerializer},
        errors=(404, 409),
        parameters=[
            OpenApiParameter(
                "n", OpenApiTypes.INT, OpenApiParameter.PATH,
                description="The attempt's number (its `n` in the deliveries list).",
            )
        ],
        tags=["events"],
    )  # fmt: skip
    def post(self, request: Request, webhook_id, n: str) -> Response:
        return self.answer(
            lambda: services.retry_delivery(actor=request.user, webhook_id=webhook_id, n=n),
            lambda delivery: Response(
                {
                    "n": int(n),
                    "event_id": str(delivery.event.event_id),
                    "delivery_state": delivery.state,
                    "due_at": delivery.due_at.isoformat().replace("+00:00", "Z"),
                },
                status=status.HTTP_202_ACCEPTED,
            ),
        )


class EventListView(ApiView):
    renderer_classes = [*ApiView.renderer_classes, EventStreamRenderer]

    @api_operation(
        summary="A Dimension's events in log order (its members): a JSON page, or "
        "text/event-stream resumed with Last-Event-ID",
        operation_id="events_list",
        responses={
            200: OpenApiResponse(
                EventPageSerializer,
                description="With `Accept: text/event-stream`: an event stream, each event's "
                "`id:` its cursor, `event:` its type and `data:` the CloudEvent JSON.",
            )
        },
        errors=(400, 404),
        parameters=[
            OpenApiParameter("dimension", str, required=True),
            OpenApiParameter(
                "after", str, required=False, description="Resume after this cursor."
            ),
            OpenApiParameter(
                "limit", OpenApiTypes.INT, required=False, description="Events per page "
                f"(1–{stream.PAGE_MAX}, default {stream.PAGE_DEFAULT})."
            ),
            OpenApiParameter(
                "Last-Event-ID", str, OpenApiParameter.HEADER, required=False,
                description="The stream resumes after this cursor (an SSE client sends it).",
            ),
        ],
        tags=["events"],
    )  # fmt: skip
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
