"""Reads of a link's past and projections: revisions, revisions/{n}, projection."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from grounding import services
from grounding.api import conditional
from grounding.api.schema import PROJECTION_PURPOSE, PROJECTION_RECIPIENT, operation
from grounding.api.serializers import (
    LinkSerializer,
    ProjectionQuerySerializer,
    ProjectionResultSerializer,
    RevisionListSerializer,
)
from grounding.api.views import ApiView
from grounding.choices import ProjectionFormat, RecordState
from grounding.selectors import get_link, revision_rows
from policies.kernel.refusals import Refusal


class RevisionListView(ApiView):
    @operation(
        summary="The link's revisions, oldest first, with actor and reason",
        operation_id="groundings_revisions_list",
        responses={200: RevisionListSerializer},
        errors=(404,),
    )
    def get(self, request: Request, grounding_id) -> Response:
        link = get_link(grounding_id)
        # Same gate as reading the link: a role in its Dimension and a covering decision;
        # a disposed link's history is its tombstone.
        document = self.reader().read(link)
        if link.record_state == RecordState.DISPOSED:
            return conditional.with_etag(Response(document), link.revision)
        latest: dict[int, dict] = {}
        for row in revision_rows(link):
            latest[row.revision] = {
                "revision": row.revision,
                "recorded_at": row.history_date.isoformat().replace("+00:00", "Z"),
                "actor": row.history_user.get_username() if row.history_user else None,
                "reason": row.history_change_reason,
            }
        body = {
            "grounding_id": str(link.grounding_id),
            "revision": link.revision,
            "results": [latest[n] for n in sorted(latest)],
        }
        return conditional.with_etag(Response(body), link.revision)


class RevisionDetailView(ApiView):
    @operation(
        summary="The link exactly as GET returned it at revision n (today's disclosure)",
        operation_id="groundings_revision_read",
        responses={200: LinkSerializer},
        errors=(404,),
    )
    def get(self, request: Request, grounding_id, revision: int) -> Response:
        link = get_link(grounding_id)
        reader = self.reader()
        reader.require_member(link.dimension_id, "grounding link")
        if revision > conditional.MAX_REVISION:
            raise Refusal("not_found", "the link has no such revision.")
        # Disclosure is today's: decisions valid now, for the link's id and Dimension.
        body = reader.read(link, revision=revision)
        return conditional.with_etag(Response(body), revision)


class ProjectionView(ApiView):
    @operation(
        summary="Project the link for a recipient and purpose under a disclosure decision",
        responses={200: ProjectionResultSerializer},
        errors=(400, 404, 409),
        parameters=[
            PROJECTION_RECIPIENT,
            PROJECTION_PURPOSE,
            OpenApiParameter(
                "format", str, enum=ProjectionFormat.values, required=False, default="native"
            ),
        ],
    )
    def get(self, request: Request, grounding_id) -> Response:
        query = ProjectionQuerySerializer(data=request.query_params)
        if not query.is_valid():
            raise ValidationError(query.errors)
        body = services.project(
            actor=request.user,
            grounding_id=grounding_id,
            recipient=query.validated_data["recipient"],
            purpose=query.validated_data["purpose"],
            format=query.validated_data["format"],
        )
        return conditional.with_etag(Response(body), body["revision"])
