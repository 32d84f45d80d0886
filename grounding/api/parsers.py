"""The only request body parser: JSON, refused with 413 above the configured size.

DRF reads the body from the request stream, which bypasses Django's
DATA_UPLOAD_MAX_MEMORY_SIZE check on `request.body`; this parser restores it.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import exceptions, status
from rest_framework.parsers import JSONParser


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
        return super().parse(stream, media_type, parser_context)
