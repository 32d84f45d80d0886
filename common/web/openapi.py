"""OpenAPI declarations every app's API shares (drf-spectacular): the one operation
helper, the problem responses and the conditional-request headers.

Every operation declares its problem responses as application/problem+json
(`ProblemSerializer`, rendered by `common.web.errors`); every mutation of an
existing link or evidence set declares If-Match (required: without it, and without
the body's expected_revision, the server answers 428) and 412/428. Every write
(POST, PATCH, DELETE) declares the Idempotency-Key header, its 400, 409 and 422, and
the Idempotent-Replayed header of a replay (common.web.idempotency). Request bodies
are closed (`close_request_bodies`): the server refuses members it does not know.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers

from common.kernel.fields import RuledCharField
from common.kernel.text import STORABLE, STORABLE_NOT_BLANK
from common.web.errors import PROBLEM_CONTENT_TYPE

COMMON = (401, 403, 429)
BODY = (400, 413, 415)
CONDITIONAL = (400, 409, 412, 428)
# A write's Idempotency-Key: invalid (400), in progress (409), reused (422).
IDEMPOTENT = (400, 409, 422)
WRITE_HANDLERS = frozenset({"post", "patch", "delete"})

PROBLEM_DESCRIPTIONS = {
    400: "validation_error (with offenders), parse_error, body_too_deep (nested deeper "
    "than GROUNDING_MAX_JSON_DEPTH), invalid_if_match, expected_revision_conflict, "
    "unknown_reference, format_unavailable, dimension_required or "
    "invalid_idempotency_key.",
    401: "not_authenticated.",
    403: "role_required or disclosure_not_decided.",
    404: "not_found.",
    405: "method_not_allowed.",
    409: "The request conflicts with the record's state (e.g. assessment_input_mismatch, "
    "link_withdrawn, profile_not_published, dimension_inactive, decision_exists, "
    "master_ref_conflict, integrity_conflict, idempotency_in_progress: a request with "
    "this Idempotency-Key is still running).",
    412: "revision_mismatch: the body carries current_revision.",
    413: "payload_too_large, or too_large (a PDF over GROUNDING_PDF_MAX_BYTES).",
    415: "unsupported_media_type: send application/json.",
    422: "wsp_contract_violation or banned_field (with every offender), invalid_pdf "
    "(offender /file with its reason), or "
    "idempotency_key_reuse (the key was sent with another request); nothing is stored.",
    428: "precondition_required: send If-Match or expected_revision.",
    429: "throttled: see Retry-After.",
}


class OffenderSerializer(serializers.Serializer):
    pointer = serializers.CharField(help_text="RFC 6901 JSON pointer into the request.")
    code = serializers.CharField()
    detail = serializers.CharField()


class ProblemSerializer(serializers.Serializer):
    """RFC 9457 problem details; never echoes submitted or restricted values."""

    type = serializers.CharField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField()
    code = serializers.CharField()
    offenders = OffenderSerializer(many=True)
    current_revision = serializers.IntegerField(
        required=False, help_text="On 412 revision_mismatch: the revision to retry against."
    )
    retry_after = serializers.IntegerField(required=False, help_text="On 429 and 503: seconds.")
    # Extension members a refusal names (common.kernel.refusals.Refusal.extra).
    change_ref = serializers.CharField(
        required=False,
        help_text="On 409 from POST /change-notifications/: the change_ref already recorded.",
    )
    disposed = serializers.CharField(
        required=False,
        help_text="On 410 answer_disposed: the id of the disposed link the key's first "
        "answer named.",
    )
    reason = serializers.CharField(
        required=False,
        help_text="On 422 invalid_pdf: why the file is no readable PDF (not_pdf, corrupt, "
        "encrypted, too_many_pages, extraction_failed).",
    )
    loss_report = serializers.ListField(
        child=serializers.DictField(child=serializers.CharField()),
        required=False,
        help_text="On 409 export_unrepresentable: what the export cannot represent.",
    )


# One example problem per status (the first code its description names).
PROBLEM_EXAMPLES: dict[int, dict[str, Any]] = {
    400: {"code": "validation_error", "title": "Bad Request", "detail": "the request is not "
          "valid.", "offenders": [{"pointer": "/statement/statement_ref", "code": "required",
                                   "detail": "statement_ref is required."}]},
    401: {"code": "not_authenticated", "title": "Unauthorized",
          "detail": "Authentication credentials were not provided."},
    403: {"code": "role_required", "title": "Forbidden",
          "detail": "this operation needs the curator role in the Dimension."},
    404: {"code": "not_found", "title": "Not Found", "detail": "no grounding link has this id."},
    405: {"code": "method_not_allowed", "title": "Method Not Allowed",
          "detail": 'Method "PUT" not allowed.'},
    409: {"code": "assessment_input_mismatch", "title": "Conflict",
          "detail": "assessed_inputs.grounding_revision is not the link's current revision."},
    412: {"code": "revision_mismatch", "title": "Precondition Failed",
          "detail": "the link has moved on.", "current_revision": 3},
    413: {"code": "payload_too_large", "title": "Request Entity Too Large",
          "detail": "the body is larger than allowed."},
    415: {"code": "unsupported_media_type", "title": "Unsupported Media Type",
          "detail": 'Unsupported media type "text/plain" in request.'},
    422: {"code": "wsp_contract_violation", "title": "Unprocessable Content",
          "detail": "the document violates the WSP v3 contract.",
          "offenders": [{"pointer": "/execution_id", "code": "required",
                         "detail": "execution_id is required."}]},
    428: {"code": "precondition_required", "title": "Precondition Required",
          "detail": 'name the revision you expect: If-Match: "<revision>" or expected_revision.'},
    429: {"code": "throttled", "title": "Too Many Requests",
          "detail": "Request was throttled.", "retry_after": 12},
}  # fmt: skip


def _example(status: int) -> OpenApiExample:
    example = PROBLEM_EXAMPLES[status]
    body = {"type": f"urn:grounding:problem:{example['code']}", "status": status,
            "offenders": [], **example}  # fmt: skip
    return OpenApiExample(body["code"], value=body, response_only=True, status_codes=[status])


def problem_responses(*codes: int) -> dict[Any, OpenApiResponse]:
    """OpenAPI responses for these statuses, as application/problem+json."""
    return {
        (code, PROBLEM_CONTENT_TYPE): OpenApiResponse(
            ProblemSerializer, description=PROBLEM_DESCRIPTIONS[code], examples=[_example(code)]
        )
        for code in sorted(set(codes))
    }


IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=True,
    description='The revision you expect, as a strong ETag: `"3"` (the ETag of your last '
    "read). Missing ⇒ 428 precondition_required (unless the body names expected_revision); "
    'stale or weak (`W/"3"`) ⇒ 412 revision_mismatch; a list, or anything but one quoted '
    "integer ⇒ 400 invalid_if_match; `*` alone names no revision ⇒ 428.",
)
IF_NONE_MATCH = OpenApiParameter(
    "If-None-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=False,
    description="304 when it names the current revision.",
)
ETAG = OpenApiParameter(
    "ETag",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    response=[200, 201, 304],
    description="The revision of the link (or set) this response is about, as a strong "
    'ETag: `"3"`. Send it back as If-Match.',
)
LOCATION = OpenApiParameter("Location", OpenApiTypes.URI, OpenApiParameter.HEADER, response=[201])
IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[ -~]{1,255}$"},
    OpenApiParameter.HEADER,
    required=False,
    description="Makes a retry safe: the same key with the same body (canonical JSON) "
    "answers the first answer again, status and body, with `Idempotent-Replayed: true`, "
    "and writes nothing; the same key with another body ⇒ 422 idempotency_key_reuse; "
    "while the first request with it runs ⇒ 409 idempotency_in_progress. 1–255 "
    "printable ASCII characters (else 400 invalid_idempotency_key), per caller, kept "
    "GROUNDING_IDEMPOTENCY_TTL_HOURS (24). A refused request stores no key.",
)


def idempotent_replayed(responses: dict[Any, Any]) -> OpenApiParameter:
    """The Idempotent-Replayed header of the operation's successes (only a success
    stores its answer)."""
    return OpenApiParameter(
        "Idempotent-Replayed",
        {"type": "string", "enum": ["true"]},
        OpenApiParameter.HEADER,
        response=[code for code in responses if str(code).startswith("2")],
        description="On a replay of an Idempotency-Key's first answer: `true`.",
    )


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's, except that:

    - a list is recognised by its success response: the problem responses keyed
      (status, media type) must not hide it, or a list's filter and pagination
      parameters go undocumented;
    - a request's free-text CharField says what the server takes: storable text
      (`STORABLE`), and not blank after trimming where it trims and refuses blank
      (`STORABLE_NOT_BLANK`);
    - a request member a model field's RegexValidator checks states that pattern;
    - a list of groups (`many=True`) states its bounds (minItems, maxItems)."""

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        regexes = [
            v.regex.pattern
            for v in getattr(field, "validators", ())
            if isinstance(v, RegexValidator) and not v.inverse_match and not v.flags
        ]
        if isinstance(field, RuledCharField) and isinstance(schema, dict):
            schema["pattern"] = field.pattern()
        elif direction == "request" and len(regexes) == 1 and isinstance(schema, dict):
            # A model field's validator (a Dimension's or profile's name, a version).
            schema.setdefault("pattern", regexes[0])
        elif (
            direction == "request"
            and isinstance(field, serializers.CharField)
            and isinstance(schema, dict)
            and (schema.get("type") == "string" or "string" in (schema.get("type") or ()))
            and not {"format", "pattern", "enum", "const"} & set(schema)
        ):
            # A nullable member's type is ["string", "null"]: its text is held alike.
            blank = field.allow_blank or not field.trim_whitespace
            schema["pattern"] = STORABLE if blank else STORABLE_NOT_BLANK
        if isinstance(field, serializers.ListSerializer) and isinstance(schema, dict):
            # drf-spectacular states a ListField's bounds, not a many=True group's.
            if field.min_length is not None:
                schema.setdefault("minItems", field.min_length)
            if field.max_length is not None:
                schema.setdefault("maxItems", field.max_length)
        return schema

    def _is_list_view(self, serializer: Any = None) -> bool:
        if serializer is None:
            serializer = self.get_response_serializers()
        if isinstance(serializer, dict):
            success = {str(code): s for code, s in serializer.items() if str(code).startswith("2")}
            serializer = success[min(success)] if success else None
        return super()._is_list_view(serializer)


def close_request_bodies(result: dict, generator, request, public) -> dict:
    """Postprocessing hook: request components are closed (additionalProperties:
    false), as the server refuses unknown members with 400 unknown_field."""
    schemas = result.get("components", {}).get("schemas", {})
    for name, schema in schemas.items():
        if name.endswith("Request") and schema.get("type") == "object":
            schema.setdefault("additionalProperties", False)
    return result


def api_operation(
    *,
    summary: str,
    responses: dict[Any, Any],
    request: Any = None,
    errors: Iterable[int] = (),
    conditional: bool = False,
    etag: bool = False,
    location: bool = False,
    parameters: Iterable[OpenApiParameter] = (),
    tags: Iterable[str] | None = None,
    public: bool = False,
    **kwargs: Any,
) -> Callable:
    """extend_schema with the problem responses (and headers) an operation has.

    Every operation answers 401, 403 and 429 (a `public` one, open to anyone, 401 for
    credentials that fail and 429 only); one with a body also 400, 413 and 415;
    `conditional` (a mutation of an existing link or set) adds If-Match and 400, 409,
    412, 428. `etag` declares the ETag of a link or set response, `location` the
    Location of what a 201 created. Tags default to the path's first segment. A
    write handler (`post`, `patch`, `delete`) adds Idempotency-Key with its 400, 409
    and 422, and Idempotent-Replayed.
    """
    codes = ({401, 429} if public else set(COMMON)) | set(errors)
    params = list(parameters)
    if request is not None:
        codes |= set(BODY)
    if conditional:
        codes |= set(CONDITIONAL)
        params.append(IF_MATCH)
    if etag:
        params.append(ETAG)
    if location:
        params.append(LOCATION)
    description = kwargs.pop("description", summary)

    def decorate(handler: Callable) -> Callable:
        write = handler.__name__ in WRITE_HANDLERS
        return extend_schema(
            summary=summary,
            description=description,
            request=request,
            responses={**responses, **problem_responses(*codes, *(IDEMPOTENT if write else ()))},
            parameters=(
                [*params, IDEMPOTENCY_KEY, idempotent_replayed(responses)]
                if write
                else params or None
            ),
            tags=list(tags) if tags is not None else None,
            **kwargs,
        )(handler)

    return decorate
