"""Append-only records bound to a link: assessments, anchor observations,
withdrawal, disposal. Each POST names the revision it expects (If-Match), and
answers 201 with the record, the link's new revision and ETag, and the link as the
actor may now read it."""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer

from grounding import services
from grounding.api import examples
from grounding.api.serializers import (
    AnchorObservationResultSerializer,
    AssessmentResultSerializer,
    DisposalResultSerializer,
    Recorded,
    WithdrawalResultSerializer,
)
from grounding.api.views import LinkView
from grounding.bodies import (
    BUILTIN_RESOLVER_MEMBERS,
    AnchorObservationSerializer,
    AssessmentSerializer,
    DisposalSerializer,
    WithdrawalSerializer,
)
from grounding.models import GroundingLink
from grounding.selectors import get_link
from policies.kernel.refusals import Offender, Refusal
from policies.web.openapi import api_operation


def _record_operation(summary: str, request: type[Serializer], example, result) -> Any:
    return api_operation(
        summary=summary,
        request=request,
        examples=[example],
        responses={201: result},
        errors=(404,),
        conditional=True,
        etag=True,
    )


class RecordView(LinkView):
    result: type[Serializer]

    def created(self, record: Any, grounding_id) -> Response:
        """201 with the record, rendered by the view's result serializer (inside the
        write's transaction: `ApiView.answer`)."""
        link = get_link(grounding_id, actor=self.request.user)
        recorded = self.recorded(record, link, self.reader().read_or_none(link))
        body = self.result(recorded).data
        return self.tagged(Response(body, status=status.HTTP_201_CREATED), link.revision)

    def recorded(self, record: Any, link: GroundingLink, document: dict | None) -> Recorded:
        return Recorded(record, link, document)


class AssessmentView(RecordView):
    result = AssessmentResultSerializer

    @_record_operation(
        "Bind a supplied assessment to the link's current revision",
        AssessmentSerializer,
        examples.ASSESSMENT,
        AssessmentResultSerializer,
    )
    def post(self, request: Request, grounding_id) -> Response:
        expected, body = self.expected(action="bind_assessment", grounding_id=grounding_id)
        return self.answer(
            lambda: services.bind_assessment(
                actor=request.user,
                grounding_id=grounding_id,
                expected_revision=expected,
                assessment=body,
            ),
            lambda record: self.created(record, grounding_id),
        )

    def recorded(self, record: Any, link: GroundingLink, document: dict | None) -> Recorded:
        # The record as the link document shows it, so verdict and reviewer stay
        # withheld wherever the actor's decisions withhold them.
        shown = next(
            (
                a
                for a in (document or {}).get("assessments", [])
                if a["assessment_ref"] == record.assessment_ref
            ),
            {},
        )
        return Recorded(record, link, document, shown)


def _builtin_offenders(body: dict[str, Any]) -> list[Offender]:
    """A builtin-resolver request names the resolver (and a reason), no observation."""
    offenders = [
        Offender(f"/{key}", "unknown_field", "a builtin request names no observation.")
        for key in sorted(set(body) - set(BUILTIN_RESOLVER_MEMBERS))
    ]
    if body["resolver"] != "builtin":
        offenders.append(Offender("/resolver", "enum", "resolver must be builtin."))
    return offenders


class AnchorObservationView(RecordView):
    result = AnchorObservationResultSerializer

    @_record_operation(
        "Record an anchor observation (the builtin resolver, or a supplied one)",
        AnchorObservationSerializer,
        examples.ANCHOR_BUILTIN,
        AnchorObservationResultSerializer,
    )
    def post(self, request: Request, grounding_id) -> Response:
        expected, body = self.expected(
            action="record_anchor_observation", grounding_id=grounding_id
        )
        builtin = isinstance(body, dict) and "resolver" in body
        if builtin:
            offenders = _builtin_offenders(body)
            if offenders:
                raise Refusal("validation_error", "the request is not valid.", offenders)
        reason = body.get("reason", "") if builtin else ""
        return self.answer(
            lambda: services.record_anchor_observation(
                actor=request.user,
                grounding_id=grounding_id,
                expected_revision=expected,
                observation=None if builtin else body,
                use_builtin_resolver=builtin,
                reason=reason if isinstance(reason, str) else "",
            ),
            lambda record: self.created(record, grounding_id),
        )


class WithdrawalView(RecordView):
    result = WithdrawalResultSerializer

    @_record_operation(
        "Withdraw the link from positive display under a recorded decision",
        WithdrawalSerializer,
        examples.WITHDRAWAL,
        WithdrawalResultSerializer,
    )
    def post(self, request: Request, grounding_id) -> Response:
        expected, body = self.expected(action="withdraw", grounding_id=grounding_id)
        return self.answer(
            lambda: services.withdraw(
                actor=request.user,
                grounding_id=grounding_id,
                expected_revision=expected,
                withdrawal=body,
            ),
            lambda record: self.created(record, grounding_id),
        )


class DisposalView(RecordView):
    result = DisposalResultSerializer

    @_record_operation(
        "Record a disposal receipt and purge local copied payloads",
        DisposalSerializer,
        examples.DISPOSAL,
        DisposalResultSerializer,
    )
    def post(self, request: Request, grounding_id) -> Response:
        expected, body = self.expected(action="dispose", grounding_id=grounding_id)
        return self.answer(
            lambda: services.dispose(
                actor=request.user,
                grounding_id=grounding_id,
                expected_revision=expected,
                disposal=body,
            ),
            lambda record: self.created(record, grounding_id),
        )
