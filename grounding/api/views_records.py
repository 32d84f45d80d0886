"""Append-only records bound to a link: assessments, anchor observations,
withdrawal, disposal. Each POST names the revision it expects (If-Match), and
answers 201 with the record, the link's new revision and ETag, and the link as the
actor may now read it."""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from grounding import services
from grounding.api import conditional, examples
from grounding.api.schema import operation
from grounding.api.serializers import (
    AnchorObservationResultSerializer,
    AnchorObservationSerializer,
    AssessmentResultSerializer,
    AssessmentSerializer,
    DisposalResultSerializer,
    DisposalSerializer,
    WithdrawalResultSerializer,
    WithdrawalSerializer,
)
from grounding.api.views import ApiView
from grounding.models import GroundingLink
from grounding.selectors import get_link
from policies.kernel.refusals import Offender, Refusal


class RecordView(ApiView):
    def created(
        self, grounding_id, record: dict[str, Any], document: dict[str, Any] | None = None
    ) -> Response:
        link: GroundingLink = get_link(grounding_id)
        if document is None:
            document = self.reader().read_or_none(link)
        body = {
            "grounding_id": str(link.grounding_id),
            "revision": link.revision,
            **record,
            "link": document,
        }
        return conditional.with_etag(Response(body, status=status.HTTP_201_CREATED), link.revision)


class AssessmentView(RecordView):
    @operation(
        summary="Bind a supplied assessment to the link's current revision",
        request=AssessmentSerializer,
        examples=[examples.ASSESSMENT],
        responses={201: AssessmentResultSerializer},
        errors=(404,),
        conditional=True,
    )
    def post(self, request: Request, grounding_id) -> Response:
        expected, body = conditional.expected_revision(
            request, action="bind_assessment", grounding_id=grounding_id
        )
        record = services.bind_assessment(
            actor=request.user,
            grounding_id=grounding_id,
            expected_revision=expected,
            assessment=body,
        )
        document = self.reader().read_or_none(get_link(grounding_id))
        # The record as the link document shows it, so verdict and reviewer stay
        # withheld wherever the actor's decisions withhold them.
        shown = next(
            (
                a
                for a in (document or {}).get("assessments", [])
                if a["assessment_ref"] == record.assessment_ref
            ),
            {
                "assessment_ref": record.assessment_ref,
                "grounding_revision": record.grounding_revision,
                "recorded_revision": record.recorded_revision,
            },
        )
        return self.created(
            grounding_id, {"assessment_id": str(record.assessment_id), **shown}, document
        )


class AnchorObservationView(RecordView):
    @operation(
        summary="Record an anchor observation (the builtin resolver, or a supplied one)",
        request=AnchorObservationSerializer,
        examples=[examples.ANCHOR_BUILTIN],
        responses={201: AnchorObservationResultSerializer},
        errors=(404,),
        conditional=True,
    )
    def post(self, request: Request, grounding_id) -> Response:
        expected, body = conditional.expected_revision(
            request, action="record_anchor_observation", grounding_id=grounding_id
        )
        builtin = isinstance(body, dict) and "resolver" in body
        if builtin:
            extra = sorted(set(body) - {"resolver", "reason"})
            offenders = [
                Offender(f"/{key}", "unknown_field", "a builtin request names no observation.")
                for key in extra
            ]
            if body["resolver"] != "builtin":
                offenders.append(Offender("/resolver", "enum", "resolver must be builtin."))
            if offenders:
                raise Refusal("validation_error", "the request is not valid.", offenders)
        reason = body.get("reason", "") if builtin else ""
        record = services.record_anchor_observation(
            actor=request.user,
            grounding_id=grounding_id,
            expected_revision=expected,
            observation=None if builtin else body,
            use_builtin_resolver=builtin,
            reason=reason if isinstance(reason, str) else "",
        )
        return self.created(
            grounding_id,
            {
                "observation_id": str(record.observation_id),
                "resolver_ref": record.resolver_ref,
                "resolution_state": record.resolution_state,
                "anchor_result": record.anchor_result,
            },
        )


class WithdrawalView(RecordView):
    @operation(
        summary="Withdraw the link from positive display under a recorded decision",
        request=WithdrawalSerializer,
        examples=[examples.WITHDRAWAL],
        responses={201: WithdrawalResultSerializer},
        errors=(404,),
        conditional=True,
    )
    def post(self, request: Request, grounding_id) -> Response:
        expected, body = conditional.expected_revision(
            request, action="withdraw", grounding_id=grounding_id
        )
        record = services.withdraw(
            actor=request.user,
            grounding_id=grounding_id,
            expected_revision=expected,
            withdrawal=body,
        )
        return self.created(
            grounding_id,
            {
                "withdrawal_id": str(record.withdrawal_id),
                "reason": record.reason,
                "authority_ref": record.authority_ref,
                "scope": record.scope,
                "decision_ref": record.decision_ref,
            },
        )


class DisposalView(RecordView):
    @operation(
        summary="Record a disposal receipt and purge local copied payloads",
        request=DisposalSerializer,
        examples=[examples.DISPOSAL],
        responses={201: DisposalResultSerializer},
        errors=(404,),
        conditional=True,
    )
    def post(self, request: Request, grounding_id) -> Response:
        expected, body = conditional.expected_revision(
            request, action="dispose", grounding_id=grounding_id
        )
        record = services.dispose(
            actor=request.user,
            grounding_id=grounding_id,
            expected_revision=expected,
            disposal=body,
        )
        return self.created(
            grounding_id,
            {
                "disposal_id": str(record.disposal_id),
                "receipt_ref": record.receipt_ref,
                "policy_ref": record.policy_ref,
                "purged": record.purged,
            },
        )
