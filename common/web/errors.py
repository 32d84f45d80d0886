"""Every API error as RFC 9457 problem+json, from one place.

`problem_exception_handler` is DRF's EXCEPTION_HANDLER; the `handler*` views cover
what never reaches DRF (unknown /api/ paths, a body refused by Django itself, a
crash outside a view). Details are fixed texts or the services' own refusal texts:
an error never echoes a submitted value, so it cannot echo restricted content.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DataError, IntegrityError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import set_rollback

from common.kernel import lost_connection
from common.kernel.refusals import Refusal, pointer_join, status_for
from common.web.parsers import PayloadTooLarge
from common.web.refusal_audit import audit_refused_request

logger = logging.getLogger("grounding.api")

API_PREFIX = "/api/"
# Declared for OpenAPI, with the problem document's shape, in common.web.openapi.
PROBLEM_CONTENT_TYPE = "application/problem+json"

# DRF/Django messages for these codes quote the submitted value; they are replaced.
_ECHOING_CODES = {
    "invalid_choice": "The value is not one of the allowed choices.",
    "does_not_exist": "No object matches this reference.",
    "incorrect_type": "The value has the wrong type.",
    "no_match": "The value does not match.",
    "invalid_pk_value": "The value is not a valid reference.",
}
# Fixed texts for exceptions whose default detail quotes a header or parser message.
_FIXED = {
    exceptions.ParseError: ("parse_error", "The request body could not be parsed as JSON."),
    exceptions.UnsupportedMediaType: (
        "unsupported_media_type",
        "Send the request body as application/json.",
    ),
    exceptions.MethodNotAllowed: ("method_not_allowed", "This method is not allowed here."),
    exceptions.NotAcceptable: ("not_acceptable", "This resource is available as JSON only."),
    exceptions.NotFound: ("not_found", "Nothing was found at this address."),
}


def problem(
    code: str,
    status_code: int,
    detail: str,
    *,
    offenders: list[dict[str, str]] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The problem document: type, title, status, detail, code, offenders (+ extra)."""
    body: dict[str, Any] = {
        "type": f"urn:grounding:problem:{code}",
        "title": code.replace("_", " ").capitalize(),
        "status": status_code,
        "detail": detail,
        "code": code,
        "offenders": offenders or [],
    }
    for key, value in (extra or {}).items():
        body.setdefault(key, value)
    return body


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF EXCEPTION_HANDLER: renders every exception raised in an API view."""
    headers: dict[str, str] = {}
    if isinstance(exc, Refusal):
        status_code = status_for(exc.code)
        body = problem(
            exc.code,
            status_code,
            exc.detail,
            offenders=[o.as_dict() for o in exc.offenders],
            extra=exc.extra,
        )
    elif isinstance(exc, exceptions.ValidationError):
        status_code = 400
        body = problem(
            "validation_error",
            status_code,
            "The request is not valid.",
            offenders=list(offenders_from(exc.detail)),
        )
    elif isinstance(exc, DjangoValidationError):
        status_code = 400
        body = problem(
            "validation_error",
            status_code,
            "The request is not valid.",
            offenders=list(_django_offenders(exc)),
        )
    elif isinstance(exc, Http404):
        status_code, body = 404, problem("not_found", 404, "Nothing was found at this address.")
    elif isinstance(exc, DjangoPermissionDenied):
        status_code = 403
        body = problem("permission_denied", 403, "You may not perform this action.")
    elif isinstance(exc, RequestDataTooBig):
        status_code = 413
        body = problem("payload_too_large", 413, PayloadTooLarge.default_detail)
    elif lost_connection.is_lost(exc):
        status_code, body, headers = database_unavailable(exc)
    elif isinstance(exc, exceptions.APIException):
        status_code = exc.status_code
        code, detail = _api_exception_text(exc)
        body = problem(code, status_code, detail)
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header
        if getattr(exc, "wait", None) is not None:
            headers["Retry-After"] = str(int(exc.wait))
            body["retry_after"] = int(exc.wait)
    elif isinstance(exc, IntegrityError | DataError):
        # What the services' checks did not foresee (or a concurrent writer won): still
        # the client's conflict or invalid value, never a 500.
        status_code, body = database_refusal(exc)
    else:
        # A bug, not a refusal: log it here, tell the client nothing about it.
        logger.exception("unhandled exception in an API view", exc_info=exc)
        status_code = 500
        body = problem("internal_error", 500, "The server failed to handle the request.")
    set_rollback()
    audit_refused_request(context.get("request"), body["code"], status_code)
    response = Response(body, status=status_code, headers=headers)
    response.content_type = PROBLEM_CONTENT_TYPE
    return response


# Unique constraints (by a column or constraint name in the database's message) and
# the code the service gives the same conflict when it sees it first.
_UNIQUE_CODES = (
    ("master_ref", "master_ref_conflict", "/master_ref"),
    ("evidence_set_ref", "evidence_set_exists", "/evidence_set_ref"),
    ("assessment_ref", "assessment_duplicate", "/assessment_ref"),
    ("decision_ref", "decision_exists", "/decision_ref"),
    ("execution_id", "execution_conflict", ""),
)


def database_refusal(exc: IntegrityError | DataError) -> tuple[int, dict[str, Any]]:
    """An integrity error as the matching 409; a value the column cannot hold as 400.

    The database's message names constraints and columns, never shown to the client;
    it only chooses the code.
    """
    message = str(exc)
    if isinstance(exc, DataError):
        offender = {
            "pointer": "",
            "code": "invalid",
            "detail": "a value the registry cannot store.",
        }
        return 400, problem(
            "validation_error", 400, "The request is not valid.", offenders=[offender]
        )
    for needle, code, pointer in _UNIQUE_CODES:
        if needle in message:
            offender = {"pointer": pointer, "code": "unique", "detail": "already recorded."}
            return 409, problem(
                code, 409, "A record with this reference exists.", offenders=[offender]
            )
    offender = {"pointer": "", "code": "conflict", "detail": "conflicts with a recorded value."}
    return 409, problem(
        "integrity_conflict",
        409,
        "The request conflicts with what is recorded.",
        offenders=[offender],
    )


# A database that refuses, times out or drops the connection: the client may retry.
DATABASE_UNAVAILABLE_DETAIL = (
    "The database is not answering; retry after the time given in Retry-After."
)


def database_unavailable(exc: BaseException) -> tuple[int, dict[str, Any], dict[str, str]]:
    """503 database_unavailable with Retry-After (settings.GROUNDING_DATABASE_RETRY_AFTER).

    The one place both DRF views (the handler above) and everything else (handler500)
    pass: the failed connections are discarded here, so the next request (or this
    one's refusal audit) connects afresh to whichever server now leads. Their
    transaction ends with them: the server rolls back what the session had not
    committed, so nothing is half-written.
    """
    discarded = lost_connection.discard_failed()
    # One line, no traceback: an outage produces many of these.
    logger.warning(
        "database unavailable: %s: %s (sqlstate %s; discarded: %s)",
        type(exc).__name__,
        str(exc).strip()[:500],
        lost_connection.sqlstate(exc),
        ",".join(discarded) or "-",
    )
    retry_after = int(getattr(settings, "GROUNDING_DATABASE_RETRY_AFTER", 5))
    body = problem("database_unavailable", 503, DATABASE_UNAVAILABLE_DETAIL)
    body["retry_after"] = retry_after
    return 503, body, {"Retry-After": str(retry_after)}


def _api_exception_text(exc: exceptions.APIException) -> tuple[str, str]:
    for kind, (code, detail) in _FIXED.items():
        if isinstance(exc, kind):
            return code, detail
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        return "not_authenticated", "Authentication credentials were missing or not valid."
    if isinstance(exc, exceptions.PermissionDenied):
        return "permission_denied", "You may not perform this action."
    if isinstance(exc, exceptions.Throttled):
        return "throttled", "Too many requests; retry after the time given in Retry-After."
    if isinstance(exc, PayloadTooLarge):
        return "payload_too_large", PayloadTooLarge.default_detail
    code = exc.default_code if isinstance(exc.default_code, str) else "error"
    return code, str(exc.default_detail)


def offenders_from(detail: Any, pointer: str = "") -> Iterator[dict[str, str]]:
    """Flatten a serializer's error structure into offenders with JSON pointers.

    Dicts nest by field name (non_field_errors belong to the parent), lists of
    messages sit at the current pointer, and lists of dicts/lists (or the
    {index: errors} dicts of ListField) nest by index.
    """
    if isinstance(detail, dict):
        for key, value in detail.items():
            if key in ("non_field_errors", "__all__"):
                yield from offenders_from(value, pointer)
            else:
                yield from offenders_from(value, pointer_join(pointer, key))
    elif isinstance(detail, list):
        if all(isinstance(item, str) for item in detail):
            for item in detail:
                yield _offender(item, pointer)
        else:
            for index, item in enumerate(detail):
                if item:
                    yield from offenders_from(item, pointer_join(pointer, index))
    else:
        yield _offender(detail, pointer)


def _offender(message: Any, pointer: str) -> dict[str, str]:
    code = getattr(message, "code", None) or "invalid"
    detail = _ECHOING_CODES.get(code, str(message))
    return {"pointer": pointer, "code": code, "detail": detail}


def _django_offenders(exc: DjangoValidationError) -> Iterator[dict[str, str]]:
    if hasattr(exc, "error_dict"):
        for field, errors in exc.error_dict.items():
            where = "" if field == "__all__" else pointer_join("", field)
            for error in errors:
                yield {"pointer": where, "code": error.code or "invalid", "detail": _plain(error)}
    else:
        for error in exc.error_list:
            yield {"pointer": "", "code": error.code or "invalid", "detail": _plain(error)}


def _plain(error: DjangoValidationError) -> str:
    # Django messages interpolate %(value)r; the bare template never holds input.
    return _ECHOING_CODES.get(error.code or "", "The value is not valid.")


# -- Django-level handlers (grounding/project/urls.py): problem+json under /api/ only.


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def _json_problem(code: str, status_code: int, detail: str) -> HttpResponse:
    return JsonResponse(
        problem(code, status_code, detail), status=status_code, content_type=PROBLEM_CONTENT_TYPE
    )


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if not _is_api(request):
        return defaults.bad_request(request, exception)
    if isinstance(exception, RequestDataTooBig):
        audit_refused_request(request, "payload_too_large", 413)
        return _json_problem("payload_too_large", 413, PayloadTooLarge.default_detail)
    audit_refused_request(request, "bad_request", 400)
    return _json_problem("bad_request", 400, "The request could not be understood.")


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if not _is_api(request):
        return defaults.permission_denied(request, exception)
    return _json_problem("permission_denied", 403, "You may not perform this action.")


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if not _is_api(request):
        return defaults.page_not_found(request, exception)
    return _json_problem("not_found", 404, "Nothing was found at this address.")


def server_error(request: HttpRequest) -> HttpResponse:
    # Django calls handler500 inside its `except`: the exception is still current.
    exc = sys.exc_info()[1]
    if exc is not None and lost_connection.is_lost(exc):
        status_code, body, headers = database_unavailable(exc)
        if _is_api(request):
            response = JsonResponse(body, status=status_code, content_type=PROBLEM_CONTENT_TYPE)
        else:
            response = HttpResponse(
                DATABASE_UNAVAILABLE_DETAIL, status=status_code, content_type="text/plain"
            )
        for name, value in headers.items():
            response[name] = value
        return response
    if not _is_api(request):
        return defaults.server_error(request)
    audit_refused_request(request, "internal_error", 500)
    return _json_problem("internal_error", 500, "The server failed to handle the request.")
