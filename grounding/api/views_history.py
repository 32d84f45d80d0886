"""Reads of a link's past and projections: revisions, revisions/{n}, projection."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from grounding import services
from grounding.api import conditional
from grounding.api.serializers import (
    History,
    ProjectionQuerySerializer,
    ProjectionResultSerializer,
    RevisionHistorySerializer,
    RevisionListSerializer,
)
from grounding.api.serializers_link import LinkSerializer
from grounding.api.views import LinkView
from grounding.choices import ProjectionFormat, RecordState
from grounding.selectors import get_link, revision_rows
from policies.kernel.refusals import Refusal
from policies.web.openapi import api_operation
from transparency import proofs
from transparency.api.serializers import RevisionProofSerializer

# The projection's query (ProjectionQuerySerializer bounds them by the stored row).
PROJECTION_RECIPIENT = OpenApiParameter(
    "recipient",
    {"type": "string", "minLength": 1, "maxLength": 255},
    required=True,
    description="Who receives the projection (a role or class ref, e.g. partner:acme).",
)
PROJECTION_PURPOSE = OpenApiParameter(
    "purpose",
    {"type": "string", "minLength": 1, "maxLength": 128},
    required=True,
    description="The purpose class, e.g. citation-display.",
)


class RevisionListView(LinkView):
    @api_operation(
        summary="The link's revisions, oldest first, with actor and reason",
        operation_id="groundings_revisions_list",
        responses={200: RevisionListSerializer},
        errors=(404,),
        etag=True,
    )
    def get(self, request: Request, grounding_id) -> Response:
        link = get_link(grounding_id, actor=request.user)
        # Same gate as reading the link: a role in its Dimension and a covering decision;
        # a disposed link's history is its tombstone.
        document = self.reader().read(link)
        if link.record_state == RecordState.DISPOSED:
            return self.tagged(Response(document), link.revision)
        # A revision's last history row is the one it ended with.
        latest = {row.revision: row for row in revision_rows(link)}
        history = History(link, [latest[n] for n in sorted(latest)])
        return self.tagged(Response(RevisionHistorySerializer(history).data), link.revision)


class RevisionDetailView(LinkView):
    @api_operation(
        summary="The link exactly as GET returned it at revision n (today's disclosure)",
        operation_id="groundings_revision_read",
        responses={200: LinkSerializer},
        errors=(404,),
        etag=True,
    )
    def get(self, request: Request, grounding_id, revision: int) -> Response:
        link = get_link(grounding_id, actor=request.user)
        reader = self.reader()
        reader.require_member(link.dimension_id, "grounding link")
        if revision > conditional.MAX_REVISION:
            raise Refusal("not_found", "the link has no such revision.")
        # Disclosure is today's: decisions valid now, for the link's id and Dimension.
        body = reader.read(link, revision=revision)
        return self.tagged(Response(body), revision)


class RevisionProofView(LinkView):
    @api_operation(
        summary="Revision n's leaf in the Dimension's transparency log, its inclusion proof "
        "and the signed checkpoint it verifies against",
        operation_id="groundings_revision_proof",
        responses={200: RevisionProofSerializer},
        errors=(404,),
        tags=["log"],
    )
    def get(self, request: Request, grounding_id, revision: int) -> Response:
        link = get_link(grounding_id, actor=request.user)
        self.reader().require_member(link.dimension_id, "grounding link")
        # A disposed link's proofs stay valid: its leaves are never rewritten.
        leaf = proofs.revision_leaf(link.grounding_id, revision)
        if leaf is None:
            raise Refusal("not_found", "no sequenced leaf of the log records this revision (yet).")
        return Response(proofs.revision_proof(proofs.log_of(link.dimension_id), leaf))


class ProjectionView(LinkView):
    @api_operation(
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
        etag=True,
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
        return self.tagged(Response(body), body["revision"])
