"""An operation's OpenAPI description, derived from its declaration
(`policies.operations.Operation`): nothing here is written per operation.

- request: the declaration's `input`; responses: `output` for each `success` status
  (a list when `many`; 204 and 304 have no body), with the ETag and Location headers
  the declaration names;
- problem responses: one per status of `common.web.operations.answers`, described
  by the very codes answered with it, each an application/problem+json document;
- parameters: the declared query parameters, If-Match for a conditional operation,
  Idempotency-Key and Idempotent-Replayed for a write;
- summary and description (with the roles that may call it), tags, operation id.

`declare_schema(view_class)` applies it to every handler of an ApiView subclass
(`extend_schema_view`, which keeps an inherited handler's schema apart); the
documentation-only extras a view adds are its `examples` (request examples).
"""

from __future__ import annotations

import functools
from http import HTTPStatus
from typing import Any

from django.utils.module_loading import import_string
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)

from common.web.errors import PROBLEM_CONTENT_TYPE
from common.web.openapi import (
    ETAG,
    IDEMPOTENCY_KEY,
    IF_MATCH,
    IF_NONE_MATCH,
    LOCATION,
    PROBLEM_EXAMPLES,
    ProblemSerializer,
    idempotent_replayed,
)
from common.web.operations import WRITE_METHODS, answers, declared
from policies.operations import Operation

# What a code means, where its name alone does not say it (problem descriptions).
NOTES = {
    "validation_error": "validation_error (with offenders)",
    "body_too_deep": "body_too_deep (nested deeper than GROUNDING_MAX_JSON_DEPTH)",
    "revision_mismatch": "revision_mismatch (the body carries current_revision)",
    "throttled": "throttled (see Retry-After)",
    "database_unavailable": "database_unavailable (retry after Retry-After)",
    "idempotency_in_progress": "idempotency_in_progress (a request with this "
    "Idempotency-Key is still running)",
    "idempotency_key_reuse": "idempotency_key_reuse (the key was sent with another request)",
    "answer_disposed": "answer_disposed (a replay: the key's first answer named a link "
    "since disposed, see `disposed`)",
    "precondition_required": "precondition_required (send If-Match or expected_revision)",
    "permission_denied": "permission_denied (a session write without its CSRF token)",
}
NO_BODY = frozenset({204, 304})


# Examples of the statuses common.web.openapi.PROBLEM_EXAMPLES has none for.
EXAMPLES: dict[int, dict[str, Any]] = {
    406: {"code": "not_acceptable", "title": "Not Acceptable",
          "detail": "This resource is available as JSON only."},
    503: {"code": "database_unavailable", "title": "Service Unavailable",
          "detail": "The database is not answering; retry after the time given in "
          "Retry-After.", "retry_after": 5},
}  # fmt: skip


@functools.lru_cache(maxsize=128)
def _resolved(declared: Any) -> Any:
    return import_string(declared) if isinstance(declared, str) else declared


def input_serializer(operation: Operation) -> Any:
    """The declared input serializer class (a dotted path is imported here)."""
    return _resolved(operation.input)


def output_serializer(operation: Operation) -> Any:
    """The declared output serializer class (a dotted path is imported here), or the
    declared responses of an answer that is not JSON (a dict)."""
    output = operation.output
    return output if isinstance(output, dict) else _resolved(output)


def _example(status: int, found: frozenset[str]) -> OpenApiExample:
    """The status's usual example when the operation answers its code, else one of
    the codes it does answer."""
    known = PROBLEM_EXAMPLES.get(status) or EXAMPLES.get(status)
    if known is None or known["code"] not in found:
        code = min(found)
        known = {"code": code, "title": HTTPStatus(status).phrase, "detail": f"{code}."}
    body = {"type": f"urn:grounding:problem:{known['code']}", "status": status,
            "offenders": [], **known}  # fmt: skip
    return OpenApiExample(body["code"], value=body, response_only=True, status_codes=[status])


def problems(operation: Operation, method: str) -> dict[Any, OpenApiResponse]:
    """One problem+json response per refusal status, described by its codes."""
    responses = {}
    for status, found in answers(operation, method).items():
        if not found:
            continue
        text = ", ".join(NOTES.get(code, code) for code in sorted(found))
        responses[(status, PROBLEM_CONTENT_TYPE)] = OpenApiResponse(
            ProblemSerializer, description=f"{text}.", examples=[_example(status, found)]
        )
    return responses


def _description(operation: Operation) -> str:
    text = operation.description or operation.summary
    if operation.roles:
        text = f"{text}\n\nRoles: {', '.join(str(role) for role in operation.roles)}."
    return text


def operation_schema(operation: Operation, method: str, examples: list | None = None) -> Any:
    """The extend_schema decorator of `operation` served by `method`."""
    write = method.upper() in WRITE_METHODS
    serializer = output_serializer(operation)
    if isinstance(serializer, dict):
        # Responses as drf-spectacular takes them, e.g. {(200, "text/event-stream"): …}
        # for an answer that is not JSON.
        successes = dict(serializer)
    else:
        if serializer is not None and operation.many:
            serializer = serializer(many=True)
        successes = {s: None if s in NO_BODY else serializer for s in operation.success}
    parameters: list[OpenApiParameter] = [
        OpenApiParameter(
            param.name,
            param.schema,
            OpenApiParameter.QUERY,
            required=param.required,
            description=param.description,
        )
        for param in operation.query
    ]
    if operation.conditional:
        parameters.append(IF_MATCH)
    if 304 in operation.success:
        parameters.append(IF_NONE_MATCH)
    if "ETag" in operation.headers:
        parameters.append(ETAG)
    if "Location" in operation.headers:
        parameters.append(LOCATION)
    if write:
        parameters += [IDEMPOTENCY_KEY, idempotent_replayed(successes)]
    return extend_schema(
        summary=operation.summary,
        description=_description(operation),
        request=input_serializer(operation),
        responses={**successes, **problems(operation, method)},
        parameters=parameters or None,
        tags=list(operation.tags) if operation.tags is not None else None,
        operation_id=operation.operation_id,
        examples=list(examples or []) or None,
    )


def declare_schema(view_class: type) -> None:
    """Apply each handler's derived schema to `view_class` (ApiView.__init_subclass__)."""
    by_method = declared(view_class)
    if not by_method:
        return
    extras = getattr(view_class, "examples", None) or {}
    schemas = {
        method: operation_schema(
            operation,
            method,
            extras.get(method) if isinstance(extras, dict) else list(extras),
        )
        for method, operation in by_method.items()
    }
    extend_schema_view(**schemas)(view_class)
