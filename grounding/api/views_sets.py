"""Evidence sets: create, read (with missing members and completeness), add and
remove members. A set is its own aggregate: its own revision, ETag and If-Match.

A set's route names its ref, which is unique per Dimension: the ref is resolved
among the caller's Dimensions (`grounding.selectors.evidence_set_of`), and when sets
of several of them hold it, `?dimension=<name>` chooses (else 400
dimension_required). The Location of a created set names its Dimension so.
"""

from __future__ import annotations

import uuid
from urllib.parse import urlencode

from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse

from common.kernel.refusals import Offender, Refusal
from common.web.views import ApiView
from grounding.api.conditional import ConditionalMixin
from grounding.api.serializers import EvidenceSetSerializer, SetState
from grounding.models import EvidenceSet
from grounding.selectors import evidence_set_of
from grounding.services.evidence_sets import (
    ADD_EVIDENCE_SET_MEMBER,
    CREATE_EVIDENCE_SET,
    REMOVE_EVIDENCE_SET_MEMBER,
    SET_DIMENSION,
    missing_members,
)
from policies.operations import Operation

READ_EVIDENCE_SET = Operation(
    "read_evidence_set",
    output=EvidenceSetSerializer,
    refusals=("not_found", "dimension_required"),
    headers=("ETag",),
    query=(SET_DIMENSION,),
    summary="Read an evidence set",
)


class SetView(ConditionalMixin, ApiView):
    """Base of the evidence-set views: a set is its own aggregate, with its own ETag."""

    def dimension(self) -> str | None:
        """The `?dimension=` the request names, if any."""
        return self.request.query_params.get("dimension")

    def set_response(self, evidence_set: EvidenceSet, status_code: int = 200) -> Response:
        members = evidence_set.memberships.filter(removed_in_set_revision__isnull=True).order_by(
            "added_in_set_revision", "membership_id"
        )
        state = SetState(evidence_set, list(members), missing_members(evidence_set))
        body = EvidenceSetSerializer(state).data
        return self.tagged(Response(body, status=status_code), evidence_set.revision)


def _in_single_member_terms(refusal: Refusal) -> Refusal:
    """The service names added members /add/<i>; this endpoint takes one, at /."""
    if not refusal.offenders:
        return refusal
    offenders = [
        Offender(o.pointer.removeprefix("/add/0"), o.code, o.detail) for o in refusal.offenders
    ]
    return Refusal(refusal.code, refusal.detail, offenders, refusal.extra)


class EvidenceSetListView(SetView):
    operation = CREATE_EVIDENCE_SET

    def post(self, request: Request) -> Response:
        def render(created: EvidenceSet) -> Response:
            response = self.set_response(created, status.HTTP_201_CREATED)
            # The ref is unique per Dimension only: the Location names both.
            detail = reverse(
                "grounding_api:evidence-set-detail",
                kwargs={"ref": created.evidence_set_ref},
                request=request,
            )
            response["Location"] = f"{detail}?{urlencode({'dimension': created.dimension.name})}"
            return response

        return self.perform(render, values=request.data)


class EvidenceSetDetailView(SetView):
    operation = READ_EVIDENCE_SET

    def get(self, request: Request, ref: str) -> Response:
        # Outside the caller's Dimensions a set answers as if it did not exist.
        return self.set_response(
            evidence_set_of(ref, actor=request.user, dimension=self.dimension())
        )


class EvidenceSetMembersView(SetView):
    operation = ADD_EVIDENCE_SET_MEMBER

    def post(self, request: Request, ref: str) -> Response:
        expected, body = self.expected()
        try:
            return self.perform(
                lambda changed: self.set_response(changed, status.HTTP_201_CREATED),
                evidence_set_ref=ref,
                dimension=self.dimension(),
                expected_revision=expected,
                add=[body],
            )
        except Refusal as refusal:
            raise _in_single_member_terms(refusal) from None


class EvidenceSetMemberView(SetView):
    operation = REMOVE_EVIDENCE_SET_MEMBER

    def delete(self, request: Request, ref: str, grounding_id: str) -> Response:
        try:
            grounding_id = str(uuid.UUID(grounding_id))
        except ValueError:
            # No link has such an id, so no set has it as a member.
            raise Refusal("not_found", "no member of the set has this id.") from None
        expected, _ = self.expected()
        return self.perform(
            self.set_response,
            evidence_set_ref=ref,
            dimension=self.dimension(),
            expected_revision=expected,
            remove=[grounding_id],
        )
