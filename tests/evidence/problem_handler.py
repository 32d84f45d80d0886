"""Stand-in for policies.web.errors while that handler is not configured in settings.

Renders a policies.kernel.refusals.Refusal the way API.md specifies (problem+json with code
and offenders); everything else falls through to DRF's default handler.
"""

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_handler

from policies.kernel.refusals import Refusal, status_for


def exception_handler(exc, context):
    if isinstance(exc, Refusal):
        status = status_for(exc.code)
        body = {
            "type": f"urn:grounding:problem:{exc.code}",
            "title": exc.code.replace("_", " "),
            "status": status,
            "detail": exc.detail,
            "code": exc.code,
            "offenders": [o.as_dict() for o in exc.offenders],
        }
        return Response(body, status=status, content_type="application/problem+json")
    return drf_handler(exc, context)
