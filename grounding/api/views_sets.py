"""Evidence sets: create, read (with missing members and completeness), add and
remove members. A set is its own aggregate: its own revision, ETag and If-Match."""

from __future__ import annotations

from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse

from grounding import services
from grounding.api.conditional import ConditionalMixin
from grounding.api.serializers import EvidenceSetSerializer, SetState
from grounding.bodies import EvidenceSetCreateSerializer, MemberAddSerializer
from grounding.models import EvidenceSet
from grounding.services.evidence_sets import missing_members
from policies.kernel.refusals import Offender, Refusal
from policies.kernel.text import control_offenders
from policies.web.openapi import api_operation
from policies.web.views import ApiView


def _get(ref: str) -> EvidenceSet:
    # No set can hold a ref with control characters or dot segments (creation refuses
    # them), and the database cannot even be asked about U+0000: such a ref names nothing.
    if control_offenders(ref, "/evidence_set_ref"):
        raise Refusal("not_found", "no evidence set has this ref.")
    found = EvidenceSet.objects.select_related("dimension").filter(evidence_set_ref=ref).first()
    if found is None:
        raise Refusal("not_found", "no evidence set has this ref.")
    return found


class SetView(ConditionalMixin, ApiView):
    """Base of the evidence-set views: a set is its own aggregate, with its own ETag."""

    def set_response(self, ref: str, status_code: int = 200) -> Response:
        evidence_set = _get(ref)
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
    @api_operation(
        summary="Create an evidence set",
        request=EvidenceSetCreateSerializer,
        responses={201: EvidenceSetSerializer},
        errors=(409,),
        etag=True,
        location=True,
    )
    def post(self, request: Request) -> Response:
        created = services.create_evidence_set(actor=request.user, values=request.data)
        response = self.set_response(created.evidence_set_ref, status.HTTP_201_CREATED)
        response["Location"] = reverse(
            "grounding_api:evidence-set-detail",
            kwargs={"ref": created.evidence_set_ref},
            request=request,
        )
        return response


class EvidenceSetDetailView(SetView):
    @api_operation(
        summary="Read an evidence set",
        responses={200: EvidenceSetSerializer},
        errors=(404,),
        etag=True,
    )
    def get(self, request: Request, ref: str) -> Response:
        evidence_set = _get(ref)
        # Outside the caller's Dimensions a set answers as if it did not exist.
        self.reader().require_member(evidence_set.dimension_id, "evidence set")
        return self.set_response(ref)


class EvidenceSetMembersView(SetView):
    @api_operation(
        summary="Add a member to an evidence set",
        request=MemberAddSerializer,
        responses={201: EvidenceSetSerializer},
        errors=(404,),
        conditional=True,
        etag=True,
    )
    def post(self, request: Request, ref: str) -> Response:
        expected, body = self.expected(action="change_evidence_set")
        try:
            services.change_evidence_set(
                actor=request.user, evidence_set_ref=ref, expected_revision=expected, add=[body]
            )
        except Refusal as refusal:
            raise _in_single_member_terms(refusal) from None
        return self.set_response(ref, status.HTTP_201_CREATED)


class EvidenceSetMemberView(SetView):
    @api_operation(
        summary="Remove a member from an evidence set",
        responses={200: EvidenceSetSerializer},
        errors=(404,),
        conditional=True,
        etag=True,
    )
    def delete(self, request: Request, ref: str, grounding_id) -> Response:
        expected, _ = self.expected(action="change_evidence_set")
        services.change_evidence_set(
            actor=request.user,
            evidence_set_ref=ref,
            expected_revision=expected,
            remove=[str(grounding_id)],
        )
        return self.set_response(ref)
