"""A chunked request body (no Content-Length) is read in full under gunicorn, and
one over the size limit is refused with 413 like any other. Raw HTTP/1.1 over a
socket to a real gunicorn; the body is split across several chunks."""

from __future__ import annotations

import io
import json
from wsgiref.util import setup_testing_defaults

import pytest
import requests

from grounding.models import GroundingLink
from tests import factories
from tests.api.helpers import register_body
from tests.conftest import requires_postgres
from tests.ops.live import database_url, gunicorn, raw_request, sqlite_database_with_token

BULK = "/api/v1/groundings/bulk/"


def head(token: str, *, length: int | None = None) -> str:
    framing = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    return (
        f"POST {BULK} HTTP/1.1\nHost: 127.0.0.1\nAuthorization: Token {token}\n"
        f"Content-Type: application/json\n{framing}\nConnection: close\n"
    )


def split(body: bytes, parts: int) -> list[bytes]:
    size = -(-len(body) // parts)
    return [body[i : i + size] for i in range(0, len(body), size)]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    database, token = sqlite_database_with_token(tmp_path_factory.mktemp("chunked"))
    with gunicorn(database, GROUNDING_MAX_BODY_BYTES="4096") as base:
        yield base, token


def test_a_chunked_body_is_read_as_sent(served):
    base, token = served
    body = b'{"items": [1]}'
    status, content = raw_request(base, head(token), split(body, 3))
    assert status == 400
    problem = json.loads(content)
    assert problem["offenders"] == [
        {"pointer": "/items/0", "code": "type", "detail": "the body must be an object."}
    ]
    # Exactly the answer the same body gets with a Content-Length.
    assert raw_request(base, head(token, length=len(body)) + "\n" + body.decode(), None) == (
        status,
        content,
    )


def test_a_chunked_body_over_the_limit_is_413(served):
    base, token = served
    body = json.dumps({"items": [{"padding": "x" * 6000}]}).encode()
    status, content = raw_request(base, head(token), split(body, 4))
    assert status == 413
    assert json.loads(content)["code"] == "payload_too_large"
    # The server still answers afterwards.
    assert requests.get(base + "/healthz", timeout=10).status_code == 200


@requires_postgres
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_chunked_bulk_registration_is_written(world):
    token = factories.token_for(world.curator)
    body = json.dumps({"items": [register_body(world), register_body(world)]}).encode()
    with gunicorn(database_url()) as base:
        status, content = raw_request(base, head(token), split(body, 5))
    assert status == 201, content[:500]
    written = [item["grounding_id"] for item in json.loads(content)["items"]]
    assert len(written) == 2
    assert GroundingLink.objects.filter(pk__in=written, created_by=world.curator).count() == 2


def test_a_server_that_leaves_chunks_undecoded_gets_411_not_an_empty_body():
    # wsgiref (runserver) passes chunked bytes through without wsgi.input_terminated.
    from grounding.project.wsgi import application

    environ = {}
    setup_testing_defaults(environ)
    environ.update(
        REQUEST_METHOD="POST",
        PATH_INFO=BULK,
        HTTP_TRANSFER_ENCODING="chunked",
        CONTENT_TYPE="application/json",
    )
    environ["wsgi.input"] = io.BytesIO(b'e\r\n{"items": [1]}\r\n0\r\n\r\n')
    seen = {}
    body = b"".join(application(environ, lambda status, headers: seen.update(s=status, h=headers)))
    assert seen["s"] == "411 Length Required"
    assert dict(seen["h"])["Content-Type"] == "application/problem+json"
    assert json.loads(body)["code"] == "length_required"
