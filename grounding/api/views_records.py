"""Append-only records bound to a link: assessments, anchor observations,
withdrawal, disposal. Each POST names the revision it expects (If-Match), and
answers 201 with the record, the link's new revision and ETag, and the link as the
actor may now read it."""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from common.kernel.refusals import Offender, Refusal
from common.web.operation_schema import output_serializer
from grounding.api import examples
from grounding.api.serializers import Recorded
from grounding.api.views import LinkView
from grounding.bodies import BUILTIN_RESOLVER_MEMBERS
from grounding.models import GroundingLink
from grounding.selectors import get_link
from grounding.services.anchoring import RECORD_ANCHOR_OBSERVATION
from grounding.services.assessments import BIND_ASSESSMENT
from grounding.services.disposal import DISPOSE
from grounding.services.withdrawal import WITHDRAW


class RecordView(LinkView):
    """A record's POST: the revision expected (If-Match), the body passed to the
    operation as `argument`, 201 with the record rendered by the operation's output."""

    argument: str

    def post(self, request: Request, grounding_id) -> Response:
        expected, body = self.expected(grounding_id=grounding_id)
        return self.perform(
            lambda record: self.created(record, grounding_id),
            grounding_id=grounding_id,
            expected_revision=expected,
            **self.arguments(body),
        )

    def arguments(self, body: Any) -> dict[str, Any]:
        return {self.argument: body}

    def created(self, record: Any, grounding_id) -> Response:
        """201 with the record, rendered by the operation's output serializer (inside
        the write's transaction: `ApiView.perform`)."""
        link = get_link(grounding_id, actor=self.request.user)
        recorded = self.recorded(record, link, self.reader().read_or_none(link))
        body = output_serializer(self.served)(recorded).data
        return self.tagged(Response(body, status=status.HTTP_201_CREATED), link.revision)

    def recorded(self, record: Any, link: GroundingLink, document: dict | None) -> Recorded:
        return Recorded(record, link, document)


class AssessmentView(RecordView):
    operation = BIND_ASSESSMENT
    examples = [examples.ASSESSMENT]
    argument = "assessment"

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
    operation = RECORD_ANCHOR_OBSERVATION
    examples = [examples.ANCHOR_BUILTIN]

    def arguments(self, body: Any) -> dict[str, Any]:
        builtin = isinstance(body, dict) and "resolver" in body
        if builtin:
            offenders = _builtin_offenders(body)
            if offenders:
                raise Refusal("validation_error", "the request is not valid.", offenders)
        reason = body.get("reason", "") if builtin else ""
        return {
            "observation": None if builtin else body,
            "use_builtin_resolver": builtin,
            "reason": reason if isinstance(reason, str) else "",
        }


class WithdrawalView(RecordView):
    operation = WITHDRAW
    examples = [examples.WITHDRAWAL]
    argument = "withdrawal"


class DisposalView(RecordView):
    operation = DISPOSE
    examples = [examples.DISPOSAL]
    argument = "disposal"
