"""The only request body parser: JSON, refused with 413 above the configured size and
with 400 `body_too_deep` when nested deeper than GROUNDING_MAX_JSON_DEPTH.

DRF reads the body from the request stream, which bypasses Django's
DATA_UPLOAD_MAX_MEMORY_SIZE check on `request.body`; this parser restores it. The
depth bound is checked here, once, for every endpoint (WSP import included): every
later walk over the body (validators, serializers, json.dumps) recurses, and a body
nested ~1,000 levels would otherwise exhaust the interpreter's stack there.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import exceptions, status
from rest_framework.parsers import JSONParser

from common.kernel.refusals import Offender, Refusal, pointer_join

TOO_DEEP = "body_too_deep"


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is larger than this service accepts."
    default_code = "payload_too_large"


class LimitedJSONParser(JSONParser):
    def parse(self, stream, media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        request = (parser_context or {}).get("request")
        if limit is not None and request is not None:
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > limit:
                raise PayloadTooLarge()
        max_depth = settings.GROUNDING_MAX_JSON_DEPTH
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            # The decoder itself ran out of stack: deeper than any limit we would set.
            raise too_deep("", max_depth) from None
        where = first_too_deep(data, max_depth)
        if where is not None:
            raise too_deep(where, max_depth)
        return data


def too_deep(pointer: str, max_depth: int) -> Refusal:
    detail = f"the body is nested deeper than {max_depth} levels."
    return Refusal(TOO_DEEP, detail, offenders=[Offender(pointer, "max_depth", detail)])


def first_too_deep(value: Any, max_depth: int) -> str | None:
    """The pointer of the first array or object nested below `max_depth` levels, or None.

    Iterative, so it cannot itself exhaust the stack; the body's top level is level 1.
    """
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        node, depth, where = stack.pop()
        if isinstance(node, dict):
            children = node.items()
        elif isinstance(node, list):
            children = enumerate(node)
        else:
            continue
        if depth > max_depth:
            return where
        stack.extend(
            (child, depth + 1, pointer_join(where, key))
            for key, child in children
            if isinstance(child, dict | list)
        )
    return None
