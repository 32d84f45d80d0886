"""A request id for every request, echoed as X-Request-ID and carried by audit events."""

import re
import uuid
from contextvars import ContextVar

_current: ContextVar[str | None] = ContextVar("request_id", default=None)
# Codes of the refused audit events written while handling the current request, so
# the API's error handler writes one only for a refusal nothing audited yet.
_refusals: ContextVar[list[str] | None] = ContextVar("refusals", default=None)
_ACCEPTABLE = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


def current_request_id() -> str | None:
    return _current.get()


def note_refusal(code: str) -> None:
    noted = _refusals.get()
    if noted is not None:
        noted.append(code)


def refusal_noted() -> bool:
    """Whether a refused audit event was written while handling this request."""
    return bool(_refusals.get())


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
        refusals = _refusals.set([])
        try:
            response = self.get_response(request)
        finally:
            _refusals.reset(refusals)
            _current.reset(token)
        response["X-Request-ID"] = request_id
        return response
