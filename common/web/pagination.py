"""The lists' cursor pagination (docs/api.md "Lists"): `cursor` and `page_size`.

DRF falls back to the default page size for a page_size it cannot read; here such a
value is refused (400 validation_error), so what the OpenAPI description says of
page_size (an integer from 1 to 10^18 - 1: at most 18 digits) is what the server
enforces. Above the maximum page size (200) it is capped.
A cursor whose position the ordering's column cannot read is 404 not_found, like one
that does not decode (DRF let the column's ValidationError through: a 400).
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from rest_framework import pagination
from rest_framework.exceptions import NotFound

from common.kernel import compat
from common.kernel.refusals import Offender, Refusal

# At most 18 digits (the schema's maximum, 10^18 - 1): a longer number is refused
# before it is parsed (int() refuses more than 4,300 digits).
_DIGITS = 18
_PAGE_SIZE = re.compile(rf"[1-9][0-9]{{0,{_DIGITS - 1}}}")


def reversed_ordering(ordering: tuple[str, ...]) -> tuple[str, ...]:
    """The ordering read backwards (a `previous` page walks it): each field's direction
    flipped. Ours, not DRF's private `_reverse_ordering`, which may change unannounced."""
    return tuple(field[1:] if field.startswith("-") else f"-{field}" for field in ordering)


class CursorPagination(compat.CursorPositionHook, pagination.CursorPagination):
    """DRF's cursor pagination; a page boundary's position is `position_of`."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200

    def get_page_size(self, request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is not None and not _PAGE_SIZE.fullmatch(raw):
            raise Refusal(
                "validation_error",
                "the query is not valid.",
                offenders=[
                    Offender(
                        f"/query/{self.page_size_query_param}",
                        "type",
                        f"page_size must be a positive integer of at most {_DIGITS} digits.",
                    )
                ],
            )
        return super().get_page_size(request)

    def paginate_queryset(self, queryset, request, view=None):
        try:
            return super().paginate_queryset(queryset, request, view)
        except ValidationError as exc:  # only the position's lookup raises it here
            raise NotFound(self.invalid_cursor_message) from exc

    def get_schema_operation_parameters(self, view) -> list[dict]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                # At most 18 digits (_PAGE_SIZE): a longer number is refused.
                parameter["schema"] = {"type": "integer", "minimum": 1, "maximum": 10**_DIGITS - 1}
                parameter["description"] = (
                    f"Results per page (default {self.page_size}; above "
                    f"{self.max_page_size} it is capped at {self.max_page_size})."
                )
            if parameter["name"] == self.cursor_query_param:
                parameter["description"] = (
                    "The `next` or `previous` link's cursor; an invalid one ⇒ 404 not_found."
                )
        return parameters
