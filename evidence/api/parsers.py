"""The PDF upload's parser: multipart, refused with 413 `too_large` before the body is
read when its length is over GROUNDING_PDF_MAX_BYTES (with room for the form's other
fields), so an oversized upload is never spooled to disk."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.parsers import MultiPartParser

from common.kernel.refusals import Offender, Refusal

# The form's other fields and the multipart framing: source_ref, title, retrieved_at.
FORM_ALLOWANCE = 64 * 1024


class PdfUploadParser(MultiPartParser):
    def parse(self, stream, media_type: str | None = None, parser_context: Any = None) -> Any:
        request = (parser_context or {}).get("request")
        if request is not None:
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            limit = settings.GROUNDING_PDF_MAX_BYTES
            if length > limit + FORM_ALLOWANCE:
                detail = f"the file is larger than {limit} bytes."
                raise Refusal(
                    "too_large", detail, offenders=[Offender("/file", "too_large", detail)]
                )
        return super().parse(stream, media_type, parser_context)
