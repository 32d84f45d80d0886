"""Evidence sets: create, read (with missing members and completeness), add and
remove members. A set is its own aggregate: its own revision, ETag and If-Match."""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse

from grounding import services
from grounding.api import conditional
from grounding.api.schema import operation
from grounding.api.serializers import (
    EvidenceSetCreateSerializer,
    EvidenceSetSerializer,
    MemberAddSerializer,
)
from grounding.api.views import ApiView
from grounding.models import EvidenceSet
from grounding.services.evidence_sets import missing_members
from policies.kernel.refusals import Offender, Refusal
from policies.kernel.text import control_offenders
from policies.reader import reader_for

TAGS = ("evidence-sets",)


def _get(ref: str) -> EvidenceSet:
    # No set can hold a ref with control characters or dot segments (creation refuses
    # them), and the database cannot even be asked about U+0000: such a ref names nothing.
    if control_offenders(ref, "/evidence_set_ref"):
        raise Refusal("not_found", "no evidence set has this ref.")
    found = EvidenceSet.objects.select_related("dimension").filter(evidence_set_ref=ref).first()
    if found is None:
        raise Refusal("not_found", "no evidence set has this ref.")
    return found


def _document(evidence_set: EvidenceSet) -> dict[str, Any]:
    members = evidence_set.memberships.filter(removed_in_set_revision__isnull=True).order_by(
        "added_in_set_revision", "membership_id"
    )
    missing = missing_members(evidence_set)
    return {
        "evidence_set_ref": evidence_set.evidence_set_ref,
        "dimension": evidence_set.dimension.name,
        "revision": evidence_set.revision,
        "combination_rule_ref": evidence_set.combination_rule_ref,
        "dependence_ref": evidence_set.dependence_ref,
        "set_assessment_ref": evidence_set.set_assessment_ref,
        "set_assessment_revision": evidence_set.set_assessment_revision,
        "declared_missing_members": list(evidence_set.declared_missing_members),
        "members": [
            {"grounding_id": str(m.link_id), "membership_role": m.membership_role} for m in members
        ],
        "missing_members": missing,
        "complete": not missing,
    }


def _set_response(request: Request, ref: str, status_code: int = 200) -> Response:
    evidence_set = _get(ref)
    response = Response(_document(evidence_set), status=status_code)
    return conditional.with_etag(response, evidence_set.revision)


def _in_single_member_terms(refusal: Refusal) -> Refusal:
    """The service names added members /add/<i>; this endpoint takes one, at /."""
    if not refusal.offenders:
        return refusal
    offenders = [
        Offender(o.pointer.removeprefix("/add/0"), o.code, o.detail) for o in refusal.offenders
    ]
    return Refusal(refusal.code, refusal.detail, offenders, refusal.extra)


class EvidenceSetListView(ApiView):
    @operation(
        summary="Create an evidence set",
        request=EvidenceSetCreateSerializer,
        responses={201: EvidenceSetSerializer},
        errors=(409,),
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        created = services.create_evidence_set(actor=request.user, values=request.data)
        response = _set_response(request, created.evidence_set_ref, status.HTTP_201_CREATED)
        response["Location"] = reverse(
            "grounding_api:evidence-set-detail",
            kwargs={"ref": created.evidence_set_ref},
            request=request,
        )
        return response


class EvidenceSetDetailView(ApiView):
    @operation(
        summary="Read an evidence set",
        responses={200: EvidenceSetSerializer},
        errors=(404,),
        tags=TAGS,
    )
    def get(self, request: Request, ref: str) -> Response:
        evidence_set = _get(ref)
        # Outside the caller's Dimensions a set answers as if it did not exist.
        reader_for(request).require_member(evidence_set.dimension_id, "evidence set")
        return _set_response(request, ref)


class EvidenceSetMembersView(ApiView):
    @operation(
        summary="Add a member to an evidence set",
        request=MemberAddSerializer,
        responses={201: EvidenceSetSerializer},
        errors=(404,),
        conditional=True,
        tags=TAGS,
    )
    def post(self, request: Request, ref: str) -> Response:
        expected, body = conditional.expected_revision(request, action="change_evidence_set")
        try:
            services.change_evidence_set(
                actor=request.user, evidence_set_ref=ref, expected_revision=expected, add=[body]
            )
        except Refusal as refusal:
            raise _in_single_member_terms(refusal) from None
        return _set_response(request, ref, status.HTTP_201_CREATED)


class EvidenceSetMemberView(ApiView):
    @operation(
        summary="Remove a member from an evidence set",
        responses={200: EvidenceSetSerializer},
        errors=(404,),
        conditional=True,
        tags=TAGS,
    )
    def delete(self, request: Request, ref: str, grounding_id) -> Response:
        expected, _ = conditional.expected_revision(request, action="change_evidence_set")
        services.change_evidence_set(
            actor=request.user,
            evidence_set_ref=ref,
            expected_revision=expected,
            remove=[str(grounding_id)],
        )
        return _set_response(request, ref)
