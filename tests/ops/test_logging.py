"""Logs are JSON lines on stdout, each carrying the request id."""

from __future__ import annotations

import io
import json
import logging

import pytest
from django.conf import settings
from django.http import HttpResponse
from django.test import RequestFactory

from common.kernel.request_context import RequestIdMiddleware
from grounding.project.logging import JsonFormatter


@pytest.fixture
def log_stream():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("tests.ops.json")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    yield logger, stream
    logger.removeHandler(handler)


def _lines(stream: io.StringIO) -> list[dict]:
    text = stream.getvalue()
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_one_json_object_per_line_with_the_core_keys(log_stream):
    logger, stream = log_stream
    logger.info("first %s", "message")
    logger.warning("second\nspans lines")
    first, second = _lines(stream)
    assert first["level"] == "INFO"
    assert first["logger"] == "tests.ops.json"
    assert first["message"] == "first message"
    assert first["request_id"] is None
    assert first["time"].endswith("+00:00")
    assert second["level"] == "WARNING"
    assert second["message"] == "second\nspans lines"


def test_records_inside_a_request_carry_its_id(log_stream):
    logger, stream = log_stream

    def view(request):
        logger.info("inside the request")
        return HttpResponse("ok")

    request = RequestFactory().get("/", headers={"X-Request-ID": "req-77"})
    response = RequestIdMiddleware(view)(request)
    logger.info("after the request")
    inside, after = _lines(stream)
    assert inside["request_id"] == "req-77" == response["X-Request-ID"]
    assert after["request_id"] is None


def test_django_request_records_logged_after_the_middleware_keep_the_id(log_stream):
    logger, stream = log_stream
    request = RequestFactory().get("/missing")
    request.request_id = "late-1"
    logger.warning("Not Found: /missing", extra={"status_code": 404, "request": request})
    (line,) = _lines(stream)
    assert line["request_id"] == "late-1"
    assert line["status_code"] == 404
    assert "request" not in line


def test_exceptions_stay_on_one_line(log_stream):
    logger, stream = log_stream
    try:
        raise ValueError("boom")
    except ValueError:
        logger.exception("failed")
    (line,) = _lines(stream)
    assert line["level"] == "ERROR"
    assert "ValueError: boom" in line["exc_info"]


def test_settings_send_json_to_stdout():
    handler = settings.LOGGING["handlers"]["stdout"]
    assert handler["stream"] == "ext://sys.stdout"
    assert settings.LOGGING["formatters"][handler["formatter"]] == {
        "()": "grounding.project.logging.JsonFormatter"
    }
    assert settings.LOGGING["root"]["handlers"] == ["stdout"]
