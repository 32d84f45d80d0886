"""POST /api/v1/groundings/from-citations/: a thin view over the service.

Refusals propagate as common.kernel.refusals.Refusal; the project's exception handler
(common.web.errors) renders them as problem+json.
"""

from __future__ import annotations

from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from common.web.views import ApiView
from grounding.services.citations.service import REGISTER_FROM_CITATIONS


class FromCitationsView(ApiView):
    # One request may register many links: rated like the bulk endpoint.
    throttle_scope = "bulk"
    operation = REGISTER_FROM_CITATIONS

    def post(self, request: Request) -> Response:
        # The report is the service's (grounding.services.citations.report), as documented.
        def render(result: tuple[dict, bool]) -> Response:
            report, created = result
            return Response(
                report, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
            )

        return self.perform(render, request=request.data)
