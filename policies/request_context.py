"""A request id for every request, echoed as X-Request-ID and carried by audit events."""

import re
import uuid
from contextvars import ContextVar

_current: ContextVar[str | None] = ContextVar("request_id", default=None)
_ACCEPTABLE = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


def current_request_id() -> str | None:
    return _current.get()


class RequestIdMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        supplied = request.headers.get("X-Request-ID", "")
        # A caller's id is kept only when it is a plain token; anything else could be
        # used to smuggle text into logs and audit rows.
        request_id = supplied if _ACCEPTABLE.match(supplied) else uuid.uuid4().hex
        request.request_id = request_id
        token = _current.set(request_id)
        try:
            response = self.get_response(request)
        finally:
            _current.reset(token)
        response["X-Request-ID"] = request_id
        return response
