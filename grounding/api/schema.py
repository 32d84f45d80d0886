"""OpenAPI declarations shared by the API views (drf-spectacular).

Every operation declares its problem responses as application/problem+json;
every mutation of an existing link or set declares If-Match (required: without it,
and without the body's expected_revision, the server answers 428) and 412/428.
Request bodies are closed (`close_request_bodies`): the services refuse members
they do not know.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema

from policies.api.serializers import problem_responses

COMMON = (401, 403, 429)
BODY = (400, 413, 415)
CONDITIONAL = (400, 409, 412, 428)

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
# The projection's query (ProjectionQuerySerializer bounds them by the stored row).
PROJECTION_RECIPIENT = OpenApiParameter(
    "recipient",
    {"type": "string", "minLength": 1, "maxLength": 255},
    required=True,
    description="Who receives the projection (a role or class ref, e.g. partner:acme).",
)
PROJECTION_PURPOSE = OpenApiParameter(
    "purpose",
    {"type": "string", "minLength": 1, "maxLength": 128},
    required=True,
    description="The purpose class, e.g. citation-display.",
)
LOCATION = OpenApiParameter("Location", OpenApiTypes.URI, OpenApiParameter.HEADER, response=[201])


problems = problem_responses


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's, except that a list is recognised by its success response:
    the problem responses keyed (status, media type) must not hide it, or a list's
    filter and pagination parameters go undocumented."""

    def _is_list_view(self, serializer: Any = None) -> bool:
        if serializer is None:
            serializer = self.get_response_serializers()
        if isinstance(serializer, dict):
            success = {str(code): s for code, s in serializer.items() if str(code).startswith("2")}
            serializer = success[min(success)] if success else None
        return super()._is_list_view(serializer)


def close_request_bodies(result: dict, generator, request, public) -> dict:
    """Postprocessing hook: request components are closed (additionalProperties:
    false), as the services refuse unknown members with 400 unknown_field."""
    schemas = result.get("components", {}).get("schemas", {})
    for name, schema in schemas.items():
        if name.endswith("Request") and schema.get("type") == "object":
            schema.setdefault("additionalProperties", False)
    return result


def operation(
    *,
    summary: str,
    responses: dict[Any, Any],
    request: Any = None,
    errors: Iterable[int] = (),
    conditional: bool = False,
    parameters: Iterable[OpenApiParameter] = (),
    tags: Iterable[str] = ("groundings",),
    etag: bool = True,
    **kwargs: Any,
) -> Callable:
    """extend_schema with the problem responses (and If-Match) an operation has."""
    codes = set(COMMON) | set(errors)
    params = list(parameters)
    if request is not None:
        codes |= set(BODY)
    if conditional:
        codes |= set(CONDITIONAL)
        params.append(IF_MATCH)
    if etag and any(code in responses for code in (200, 201)):
        params.append(ETAG)
    if 201 in responses:
        params.append(LOCATION)
    return extend_schema(
        summary=summary,
        description=kwargs.pop("description", summary),
        request=request,
        responses={**responses, **problems(*codes)},
        parameters=params or None,
        tags=list(tags),
        **kwargs,
    )
