"""Under DEBUG, Django answers a path no URL matches with its technical HTML 404
page instead of `handler404`, so an API client would get HTML. This turns any
HTML 404 under /api/ into the same problem+json that `handler404` gives without
DEBUG. It sits outside CommonMiddleware, so APPEND_SLASH redirects still happen."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from common.web.errors import API_PREFIX, not_found


class ApiNotFoundMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.status_code == 404
            and request.path.startswith(API_PREFIX)
            and response.get("Content-Type", "").startswith("text/html")
        ):
            return not_found(request)
        return response
