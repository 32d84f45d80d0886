"""Chunked request bodies, read in full before Django sees the request.

Django reads `wsgi.input` up to CONTENT_LENGTH only, so a body sent with
`Transfer-Encoding: chunked` (no Content-Length) looks empty. gunicorn decodes the
chunks and marks its input as terminated (`wsgi.input_terminated`); this wrapper
reads that input, up to one byte past DATA_UPLOAD_MAX_MEMORY_SIZE, and hands Django
a buffered body with its length. A body over the limit therefore reaches Django
with a length over the limit and is refused there like any other (413
payload_too_large); the rest of it is never read. A server that does not decode
chunks (runserver) would hand Django an empty body: such a request is refused with
411 length_required instead.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings

_READ_SIZE = 64 * 1024


def _is_chunked(environ: dict[str, Any]) -> bool:
    encoding = environ.get("HTTP_TRANSFER_ENCODING", "")
    return "chunked" in encoding.lower() and not environ.get("CONTENT_LENGTH")


def _read_bounded(stream: Any, limit: int | None) -> bytes:
    parts: list[bytes] = []
    total = 0
    while limit is None or total <= limit:
        wanted = _READ_SIZE if limit is None else min(_READ_SIZE, limit + 1 - total)
        part = stream.read(wanted)
        if not part:
            break
        parts.append(part)
        total += len(part)
    return b"".join(parts)


class ChunkedBodyMiddleware:
    """WSGI middleware (grounding/project/wsgi.py): buffer a terminated chunked body."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        if _is_chunked(environ) and environ.get("wsgi.input_terminated"):
            body = _read_bounded(environ["wsgi.input"], settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        elif _is_chunked(environ):
            return _length_required(start_response)
        return self.app(environ, start_response)


def _length_required(start_response: Callable) -> Iterable[bytes]:
    from common.web.errors import PROBLEM_CONTENT_TYPE, problem

    detail = "Send the request body with a Content-Length header."
    body = json.dumps(problem("length_required", 411, detail)).encode()
    start_response(
        "411 Length Required",
        [
            ("Content-Type", PROBLEM_CONTENT_TYPE),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
        ],
    )
    return [body]
