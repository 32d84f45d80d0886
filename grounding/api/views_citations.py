"""POST /api/v1/groundings/from-citations/: a thin view over the service.

Refusals propagate as policies.kernel.refusals.Refusal; the project's exception handler
(policies.web.errors) renders them as problem+json.
"""

from __future__ import annotations

from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from grounding.api.serializers_citations import FromCitationsReportSerializer
from grounding.bodies import FromCitationsRequestSerializer
from grounding.services.citations.service import register_from_citations
from policies.web.openapi import api_operation
from policies.web.views import ApiView


class FromCitationsView(ApiView):
    # One request may register many links: rated like the bulk endpoint.
    throttle_scope = "bulk"

    @api_operation(
        summary="Register candidate links from a provider's citations",
        description=(
            "Body: dimension, profile, answer_revision_ref, format "
            "(anthropic-messages | openai-responses | gemini-generate-content | crw-extract | "
            "crw-search), payload (the provider's response "
            "object as returned) and passages (document key ⇒ {passage_id} or an "
            "external binding). 201 when links were created, 200 on a replay."
        ),
        request=FromCitationsRequestSerializer,
        responses={201: FromCitationsReportSerializer, 200: FromCitationsReportSerializer},
        errors=(400, 409),
        operation_id="groundings_from_citations",
    )
    def post(self, request: Request) -> Response:
        # The report is the service's (grounding.services.citations.report), as documented.
        def render(result: tuple[dict, bool]) -> Response:
            report, created = result
            return Response(
                report, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
            )

        return self.answer(
            lambda: register_from_citations(actor=request.user, request=request.data), render
        )
