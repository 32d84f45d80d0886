"""The one base of every API view (grounding, evidence, policies).

An API view is authenticated, speaks JSON only (the project's parser, which bounds
size and depth, and renderer), answers every error through the one problem handler
(`policies.web.errors`, DRF's EXCEPTION_HANDLER) and varies by credentials: what a
reader sees depends on their roles and disclosure decisions. Conditional requests
(ETag, If-Match) are grounding's, layered on top for link and evidence-set views
(`grounding.api.conditional.ConditionalMixin`).

A write (POST, PATCH, DELETE) answers through `answer(write, render)`: its answer is
rendered inside the write's transaction and, with an `Idempotency-Key`, stored there
and replayed to a retry (`policies.web.idempotency`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.utils.cache import patch_vary_headers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from policies.reader import Reader, reader_for
from policies.web.idempotency import WRITE_METHODS, Renderer, Replayed, WriteScope
from policies.web.parsers import LimitedJSONParser

CREDENTIAL_HEADERS = ("Authorization", "Cookie")


class ApiView(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [LimitedJSONParser]
    renderer_classes = [JSONRenderer]

    write_scope: WriteScope | None = None

    def initial(self, request, *args, **kwargs) -> None:
        super().initial(request, *args, **kwargs)
        # A method this view does not handle is refused 405 by dispatch, before any
        # Idempotency-Key is looked at (a key reused on it is no reuse).
        if request.method in WRITE_METHODS and hasattr(self, request.method.lower()):
            # After authentication: keys are the caller's.
            self.write_scope = WriteScope.of(request)

    def answer(self, write: Callable[[], Any], render: Renderer) -> Response:
        """The answer of `write` (a service call), rendered by `render` from what the
        write's last transaction returned, inside that transaction."""
        assert self.write_scope is not None, "answer() is for POST, PATCH and DELETE"
        return self.write_scope.answer(write, render)

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, Replayed):
            return exc.response()
        return super().handle_exception(exc)

    def reader(self) -> Reader:
        """Who is reading: the request's one reader (roles and decisions cached)."""
        return reader_for(self.request)

    def validated(self, serializer_class: type[Serializer]) -> dict[str, Any]:
        """The body as its serializer validates it; else 400 validation_error with an
        offender per error (rendered by the problem handler)."""
        serializer = serializer_class(data=self.request.data)
        if not serializer.is_valid():
            raise ValidationError(serializer.errors)
        return dict(serializer.validated_data)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        patch_vary_headers(response, CREDENTIAL_HEADERS)
        return response
