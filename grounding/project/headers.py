"""Response headers the API adds to every answer.

API bodies may carry protected source text (quotations, anchors, passages): no
shared or private cache may keep them, hence `Cache-Control: no-store` on every
response under /api/ (conditional requests still work: ETag and If-None-Match
are answered by the server each time). The Content-Security-Policy of HTML pages
comes from django-csp (settings.CONTENT_SECURITY_POLICY).
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from common.web.errors import API_PREFIX


class ApiNoStoreMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.path.startswith(API_PREFIX):
            response["Cache-Control"] = "no-store"
        return response
