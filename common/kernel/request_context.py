"""A request id for every request, echoed as X-Request-ID and carried by audit events."""

import re
import uuid
from contextvars import ContextVar

_current: ContextVar[str | None] = ContextVar("request_id", default=None)
# Codes of the refused audit events written while handling the current request, so
# the API's error handler writes one only for a refusal nothing audited yet.
_refusals: ContextVar[list[str] | None] = ContextVar("refusals", default=None)
# Set when a write's COMMIT failed with the connection: its outcome is unknown to
# this request (the COMMIT may be durable, its answer lost), so no refused event is
# written for it: the keyed retry records what happened (a replay or one write).
_in_doubt: ContextVar[list[bool] | None] = ContextVar("in_doubt", default=None)
_ACCEPTABLE = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


def current_request_id() -> str | None:
    return _current.get()


def note_refusal(code: str) -> None:
    noted = _refusals.get()
    if noted is not None:
        noted.append(code)


def note_in_doubt() -> None:
    flag = _in_doubt.get()
    if flag is not None:
        flag.append(True)


def write_in_doubt() -> bool:
    """Whether a write of this request lost its connection in its COMMIT."""
    return bool(_in_doubt.get())


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
        in_doubt = _in_doubt.set([])
        try:
            response = self.get_response(request)
        finally:
            _in_doubt.reset(in_doubt)
            _refusals.reset(refusals)
            _current.reset(token)
        response["X-Request-ID"] = request_id
        return response
