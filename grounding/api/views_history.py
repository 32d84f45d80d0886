"""Reads of a link's past and projections: revisions, revisions/{n}, projection."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from common.kernel.refusals import Refusal
from grounding.api import conditional
from grounding.api.serializers import (
    History,
    ProjectionQuerySerializer,
    RevisionHistorySerializer,
    RevisionListSerializer,
)
from grounding.api.serializers_link import LinkSerializer
from grounding.api.views import READ_REFUSALS, LinkView
from grounding.choices import RecordState
from grounding.selectors import get_link, revision_rows
from grounding.services.projection import PROJECT
from policies.operations import Operation
from transparency import proofs

READ_REVISIONS = Operation(
    "read",
    output=RevisionListSerializer,
    refusals=READ_REFUSALS,
    headers=("ETag",),
    summary="The link's revisions, oldest first, with actor and reason",
    operation_id="groundings_revisions_list",
)
READ_REVISION_PROOF = Operation(
    "read",
    output="transparency.api.serializers.RevisionProofSerializer",
    refusals=("not_found",),
    summary="Revision n's leaf in the Dimension's transparency log, its inclusion proof "
    "and the signed checkpoint it verifies against",
    operation_id="groundings_revision_proof",
    tags=("log",),
)
READ_REVISION = Operation(
    "read",
    output=LinkSerializer,
    refusals=READ_REFUSALS,
    headers=("ETag",),
    summary="The link exactly as GET returned it at revision n (today's disclosure)",
    operation_id="groundings_revision_read",
)


class RevisionListView(LinkView):
    operation = READ_REVISIONS

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
    operation = READ_REVISION

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
    operation = READ_REVISION_PROOF

    def get(self, request: Request, grounding_id, revision: int) -> Response:
        link = get_link(grounding_id, actor=request.user)
        self.reader().require_member(link.dimension_id, "grounding link")
        # A disposed link's proofs stay valid: its leaves are never rewritten.
        log = proofs.log_of(link.dimension_id)
        leaf = proofs.revision_leaf(log, link.grounding_id, revision)
        if leaf is None:
            raise Refusal("not_found", "no sequenced leaf of the log records this revision (yet).")
        return Response(proofs.revision_proof(log, leaf))


class ProjectionView(LinkView):
    operation = PROJECT

    def get(self, request: Request, grounding_id) -> Response:
        query = ProjectionQuerySerializer(data=request.query_params)
        if not query.is_valid():
            raise ValidationError(query.errors)
        body = PROJECT.entry(
            actor=request.user,
            grounding_id=grounding_id,
            recipient=query.validated_data["recipient"],
            purpose=query.validated_data["purpose"],
            format=query.validated_data["format"],
        )
        return self.tagged(Response(body), body["revision"])
