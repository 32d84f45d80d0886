"""The operations the API serves, found in the URLconf, and what each may answer.

Every API view declares the operation of each of its handlers (`ApiView.operation`,
or `operations` by method: `policies.operations.Operation`). From those declarations:

- `operation_of(view_class, method)` / `routed(request)`: the operation a request
  addresses, and so the audit action of its refusal (common.web.refusal_audit);
- `answers(operation, method)`: every status the operation may answer and the codes
  of each (its own refusals, by `STATUS_BY_CODE`, and the web layer's: parsing,
  authentication, throttling, content negotiation, conditional requests, idempotency
  keys, an unavailable database). The OpenAPI problem responses are these
  (common.web.openapi.operation_schema);
- `check_answer`: an answer outside them is logged, and raises under
  `GROUNDING_STRICT_ANSWERS` (the test settings), so the suite proves every answer it
  provokes is declared;
- `api_routes()`: every (route, method) of the URLconf under the API, for the tests
  that walk them.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.urls import Resolver404, URLPattern, URLResolver, get_resolver, resolve

from common.kernel.refusals import STATUS_BY_CODE
from policies.operations import Operation

logger = logging.getLogger("grounding.api")

HTTP_METHODS = ("get", "post", "put", "patch", "delete")
WRITE_METHODS = frozenset({"POST", "PATCH", "DELETE"})
API_PREFIX = "api/v1/"

# The codes the web layer answers for any operation, and their statuses.
WEB_STATUS: dict[str, int] = {
    "parse_error": 400,
    "not_authenticated": 401,
    # Session (cookie) writes without their CSRF token; a view's PermissionDenied.
    "permission_denied": 403,
    "not_acceptable": 406,
    "payload_too_large": 413,
    "unsupported_media_type": 415,
    "throttled": 429,
    "database_unavailable": 503,
}
# Every operation: credentials, rate, an Accept it cannot answer, the database.
ANY = ("not_authenticated", "throttled", "not_acceptable", "database_unavailable")
# A request body, parsed (every write's is, for its Idempotency-Key's fingerprint),
# and, where the operation declares one, validated.
PARSED = ("parse_error", "unsupported_media_type", "payload_too_large", "body_too_deep")
VALIDATED = ("validation_error",)
# A mutation of an existing aggregate (grounding.api.conditional).
CONDITIONAL = ("invalid_if_match", "precondition_required", "revision_mismatch",
               "expected_revision_conflict", "validation_error")  # fmt: skip
# A write's Idempotency-Key (common.web.idempotency): a replay whose stored answer
# a disposal purged is 410 answer_disposed; session writes' CSRF.
WRITE = ("invalid_idempotency_key", "idempotency_in_progress", "idempotency_key_reuse",
         "answer_disposed", "permission_denied")  # fmt: skip


def status_of(code: str) -> int:
    return WEB_STATUS.get(code) or STATUS_BY_CODE[code]


def codes(operation: Operation, method: str) -> frozenset[str]:
    """Every refusal code the operation may answer when called with `method`."""
    found = set(operation.refusals) | set(ANY)
    write = method.upper() in WRITE_METHODS
    if write or operation.input is not None:
        found |= set(PARSED)
    if operation.input is not None:
        found |= set(VALIDATED)
    if operation.conditional:
        found |= set(CONDITIONAL)
    if write:
        found |= set(WRITE)
    return frozenset(found)


@functools.lru_cache(maxsize=256)
def answers(operation: Operation, method: str) -> dict[int, frozenset[str]]:
    """Status -> the codes answered with it: the operation's refusals (module
    docstring); its successes carry no code. (Read on every answer: kept per
    operation and method; declarations do not change.)"""
    by_status: dict[int, set[str]] = {status: set() for status in operation.success}
    for code in codes(operation, method):
        by_status.setdefault(status_of(code), set()).add(code)
    return {status: frozenset(found) for status, found in sorted(by_status.items())}


@functools.lru_cache(maxsize=256)
def declared(view_class: type) -> dict[str, Operation]:
    """Handler name (`get`, `post`, …) -> its operation, as the view declares them:
    `operations` by name, or `operation` for the one handler the view has."""
    by_method = dict(getattr(view_class, "operations", None) or {})
    single = getattr(view_class, "operation", None)
    if single is not None:
        handlers = [m for m in HTTP_METHODS if callable(getattr(view_class, m, None))]
        for method in handlers:
            by_method.setdefault(method, single)
    return by_method


def operation_of(view_class: type | None, method: str) -> Operation | None:
    if view_class is None:
        return None
    return declared(view_class).get(method.lower())


def routed(request: Any) -> tuple[Operation, dict[str, Any]] | None:
    """The operation this request addresses and its path arguments; None when it
    addresses none (an unknown path, a method the route does not have)."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return None
    view_class = getattr(match.func, "view_class", None)
    operation = operation_of(view_class, request.method or "")
    return (operation, dict(match.kwargs)) if operation is not None else None


class UndeclaredAnswer(AssertionError):
    """An operation answered a status or code its declaration does not name."""


# Under GROUNDING_STRICT_ANSWERS: (operation, method, status, code) of every answer
# given, so a test session can tell which declared answers it never provoked
# (tests/conftest.py prints them at the end of a run).
ANSWERED: set[tuple[Operation, str, int, str | None]] = set()


def check_answer(operation: Operation, method: str, status: int, code: str | None) -> None:
    """Log an answer the declaration does not name; raise it under
    GROUNDING_STRICT_ANSWERS (tests)."""
    allowed = answers(operation, method)
    strict = getattr(settings, "GROUNDING_STRICT_ANSWERS", False)
    if strict:
        ANSWERED.add((operation, method.upper(), status, code))
    if status in allowed and (code is None or code in allowed[status] or status < 400):
        return
    message = (
        f"{method} {operation.action} answered {status} {code or ''}: not declared "
        f"(declared: {sorted((s, sorted(c)) for s, c in allowed.items())})"
    )
    if strict:
        raise UndeclaredAnswer(message)
    logger.warning(message)


@dataclass(frozen=True)
class Route:
    name: str
    pattern: str
    method: str
    view_class: type
    operation: Operation | None

    @property
    def converters(self) -> dict[str, str]:
        """Path parameter -> its converter (uuid, path, str, int)."""
        found = _PARAMETER.finditer(self.pattern)
        return {m.group("name"): m.group("conv") or "str" for m in found}


_PARAMETER = re.compile(r"<(?:(?P<conv>\w+):)?(?P<name>\w+)>")


def api_routes(
    resolver: Any = None, namespace: str | None = None, prefix: str = ""
) -> Iterator[Route]:
    """Every (route, method) under /api/v1/: its view and declared operation (None
    where it has none: the walking test fails on it)."""
    for pattern in (resolver or get_resolver()).url_patterns:
        text = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            inner = pattern.namespace
            name = f"{namespace}:{inner}" if namespace and inner else inner or namespace
            yield from api_routes(pattern, name, text)
        elif isinstance(pattern, URLPattern) and text.startswith(API_PREFIX):
            view_class = getattr(pattern.callback, "view_class", None)
            if view_class is None:
                continue
            name = f"{namespace}:{pattern.name}" if namespace else pattern.name
            for method in HTTP_METHODS:
                if callable(getattr(view_class, method, None)):
                    yield Route(
                        name, text, method.upper(), view_class, operation_of(view_class, method)
                    )
