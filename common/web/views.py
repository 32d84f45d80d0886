"""The one base of every API view (grounding, evidence, policies).

An API view is authenticated, speaks JSON only (the project's parser, which bounds
size and depth, and renderer), answers every error through the one problem handler
(`common.web.errors`, DRF's EXCEPTION_HANDLER) and varies by credentials: what a
reader sees depends on their roles and disclosure decisions. Conditional requests
(ETag, If-Match) are grounding's, layered on top for link and evidence-set views
(`grounding.api.conditional.ConditionalMixin`).

Each handler serves one declared operation (`policies.operations.Operation`):
`operation = X` for a view with one handler, `operations = {"get": X, "post": Y}`
otherwise. Its OpenAPI description is derived from the declaration when the class is
made (common.web.operation_schema; `examples` adds request examples), the audit
action of a refused request is the declaration's (common.web.refusal_audit), and
every answer is checked against the statuses and codes it declares
(common.web.operations.check_answer).

A write (POST, PATCH, DELETE) answers through `answer(write, render)`, or
`perform(render, **arguments)` which calls the operation's entry with the caller as
actor: its answer is rendered inside the write's transaction and, with an
`Idempotency-Key`, stored there and replayed to a retry (`common.web.idempotency`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from django.utils.cache import patch_vary_headers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from common.web.idempotency import WRITE_METHODS, Renderer, Replayed, WriteScope
from common.web.operation_schema import declare_schema, input_serializer
from common.web.operations import check_answer, operation_of
from common.web.parsers import LimitedJSONParser
from policies.operations import Operation
from policies.reader import Reader, reader_for

CREDENTIAL_HEADERS = ("Authorization", "Cookie")


class ApiView(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [LimitedJSONParser]
    renderer_classes = [JSONRenderer]

    # The operation of the view's one handler, or of each handler by name.
    operation: ClassVar[Operation | None] = None
    operations: ClassVar[dict[str, Operation]] = {}
    # Request examples for the OpenAPI description (a list, or lists by handler name).
    examples: ClassVar[Any] = ()

    write_scope: WriteScope | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declare_schema(cls)

    @property
    def served(self) -> Operation:
        """The operation this request's handler serves."""
        operation = operation_of(type(self), self.request.method or "")
        assert operation is not None, f"{type(self).__name__} declares no operation for it"
        return operation

    def initial(self, request, *args, **kwargs) -> None:
        # Who asks, before what they accept (DRF negotiates first): a 406 is then
        # audited with its actor, and no unauthenticated request writes an audit event
        # by its Accept header (it is 401, which is not audited).
        self.perform_authentication(request)
        super().initial(request, *args, **kwargs)
        if request.method in WRITE_METHODS and hasattr(self, request.method.lower()):
            # After authentication: keys are the caller's. (A method the view does not
            # have is 405, whatever its Idempotency-Key.)
            self.write_scope = WriteScope.of(request)

    def answer(self, write: Callable[[], Any], render: Renderer) -> Response:
        """The answer of `write` (a service call), rendered by `render` from what the
        write's last transaction returned, inside that transaction."""
        assert self.write_scope is not None, "answer() is for POST, PATCH and DELETE"
        return self.write_scope.answer(write, render)

    def perform(self, render: Renderer, **arguments: Any) -> Response:
        """`answer` of the served operation's entry (or composite), called with the
        request's user as actor and `arguments`."""
        operation = self.served
        call = operation.run or operation.entry
        return self.answer(lambda: call(actor=self.request.user, **arguments), render)

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, Replayed):
            return exc.response()
        return super().handle_exception(exc)

    def reader(self) -> Reader:
        """Who is reading: the request's one reader (roles and decisions cached)."""
        return reader_for(self.request)

    def validated(self, serializer_class: type[Serializer] | None = None) -> dict[str, Any]:
        """The body as its serializer (by default the served operation's `input`)
        validates it; else 400 validation_error with an offender per error (rendered by
        the problem handler)."""
        serializer_class = serializer_class or input_serializer(self.served)
        assert serializer_class is not None, "the served operation declares no input"
        serializer = serializer_class(data=self.request.data)
        if not serializer.is_valid():
            raise ValidationError(serializer.errors)
        return dict(serializer.validated_data)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        patch_vary_headers(response, CREDENTIAL_HEADERS)
        operation = operation_of(type(self), request.method or "")
        if operation is not None:
            data = getattr(response, "data", None)
            refused = response.status_code >= 400 and isinstance(data, dict)
            code = data.get("code") if refused else None
            check_answer(operation, request.method, response.status_code, code)
        return response
