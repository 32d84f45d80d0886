"""OpenAPI declarations shared by the API views (drf-spectacular).

Every operation declares its problem responses as application/problem+json;
every mutation of an existing link or set declares If-Match and 412/428.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

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
    required=False,
    description='The revision you expect, as a strong ETag: "3". Required unless the body '
    'names expected_revision. Missing ⇒ 428; stale or weak (W/"3") ⇒ 412; a list, `*` '
    "alone, or anything but one quoted integer ⇒ 400 invalid_if_match / 428.",
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
    description='The revision of the link (or set) this response is about: "3".',
)
LOCATION = OpenApiParameter("Location", OpenApiTypes.URI, OpenApiParameter.HEADER, response=[201])


problems = problem_responses


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
