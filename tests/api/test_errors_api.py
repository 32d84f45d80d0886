"""Every error is application/problem+json with type, title, status, detail, code
and offenders; none echoes input or leaks a stack trace."""

import json

import pytest
from django.core.exceptions import RequestDataTooBig
from django.test import Client, RequestFactory

from common.web import errors
from tests.api.helpers import client_for, if_match, problem, register_body, url
from tests.api.urls import SECRET


def test_unauthenticated_is_401_not_authenticated_with_a_challenge(world, link):
    response = client_for(None).get(url(link.grounding_id))
    problem(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Token"


def test_a_bad_token_is_401(world):
    client = client_for(None)
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    problem(client.get("/api/v1/groundings/"), 401, "not_authenticated")


def test_an_unknown_api_path_is_a_404_problem(world):
    problem(client_for(world.curator).get("/api/v1/nowhere/"), 404, "not_found")


def test_an_unknown_api_path_is_a_404_problem_under_debug_too(world, settings):
    # With DEBUG, Django renders its technical HTML page instead of handler404.
    settings.DEBUG = True
    client = client_for(world.curator)
    problem(client.get("/api/v1/nowhere/"), 404, "not_found")
    problem(client.get("/api/nowhere"), 404, "not_found")
    # APPEND_SLASH still redirects a path that exists with its slash.
    assert client.get("/api/v1/groundings").status_code == 301
    page = client.get("/nowhere/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")


def test_a_path_outside_the_api_keeps_djangos_own_404(world):
    response = Client().get("/not-the-api/")
    assert response.status_code == 404
    assert not response["Content-Type"].startswith("application/problem+json")


def test_a_wrong_method_is_405(world):
    response = client_for(world.curator).delete("/api/v1/groundings/")
    problem(response, 405, "method_not_allowed")


def test_a_non_json_body_is_415(world):
    response = client_for(world.curator).post(
        "/api/v1/groundings/", "a=b", content_type="application/x-www-form-urlencoded"
    )
    body = problem(response, 415, "unsupported_media_type")
    assert "x-www-form-urlencoded" not in body["detail"]


def test_malformed_json_is_400_parse_error_without_echoing_the_body(world):
    response = client_for(world.curator).post(
        "/api/v1/groundings/", '{"statement": "SECRET-BODY', content_type="application/json"
    )
    problem(response, 400, "parse_error")
    assert "SECRET-BODY" not in response.content.decode()


def test_an_oversized_body_is_413(world, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    body = json.dumps(register_body(world) | {"padding": "x" * 2048})
    response = client_for(world.curator).post(
        "/api/v1/groundings/", body, content_type="application/json"
    )
    problem(response, 413, "payload_too_large")


def test_a_body_django_refuses_as_too_big_is_413_under_the_api():
    request = RequestFactory().post("/api/v1/groundings/")
    response = errors.bad_request(request, RequestDataTooBig("too big"))
    assert response.status_code == 413
    assert response["Content-Type"] == "application/problem+json"
    assert json.loads(response.content)["code"] == "payload_too_large"


def test_too_many_requests_is_429_with_retry_after(world, settings):
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {"read": "2/min", "write": "100/min", "bulk": "1/min"}
    settings.REST_FRAMEWORK = rest
    client = client_for(world.curator)
    assert client.get("/api/v1/groundings/").status_code == 200
    assert client.get("/api/v1/groundings/").status_code == 200
    response = client.get("/api/v1/groundings/")
    body = problem(response, 429, "throttled")
    assert 0 < int(response["Retry-After"]) <= 60
    assert body["retry_after"] == int(response["Retry-After"])
    # Scopes are counted apart: writes still go through.
    created = client.post("/api/v1/groundings/", register_body(world), format="json")
    assert created.status_code == 201


def test_a_stale_revision_is_412_with_the_current_revision_in_the_body(world, link):
    client_for(world.curator).patch(
        url(link.grounding_id),
        {"owner_ref": "x", "revision_reason": "r"},
        format="json",
        **if_match(1),
    )
    response = client_for(world.curator).patch(
        url(link.grounding_id),
        {"owner_ref": "y", "revision_reason": "r"},
        format="json",
        **if_match(1),
    )
    body = problem(response, 412, "revision_mismatch")
    assert body["current_revision"] == 2


def test_a_missing_precondition_is_428(world, link):
    response = client_for(world.curator).patch(
        url(link.grounding_id), {"owner_ref": "y", "revision_reason": "r"}, format="json"
    )
    problem(response, 428, "precondition_required")


def test_a_refusal_never_echoes_the_submitted_value(world):
    payload = register_body(world)
    payload["statement"]["statement_ref"] = "SECRET-" + "x" * 600
    payload["support"]["support_kind"] = "SECRET-KIND"
    response = client_for(world.curator).post("/api/v1/groundings/", payload, format="json")
    body = problem(response, 400, "validation_error")
    assert {o["pointer"] for o in body["offenders"]} == {
        "/statement/statement_ref",
        "/support/support_kind",
    }
    assert "SECRET" not in response.content.decode()


@pytest.mark.urls("tests.api.urls")
def test_an_unexpected_exception_in_an_api_view_is_a_bare_500_problem(db):
    response = Client(raise_request_exception=False).get("/api/v1/test-failing/")
    body = problem(response, 500, "internal_error")
    assert body["detail"] == "The server failed to handle the request."
    content = response.content.decode()
    assert SECRET not in content and "RuntimeError" not in content


@pytest.mark.urls("tests.api.urls")
def test_an_unexpected_exception_outside_drf_is_a_500_problem_under_the_api(db):
    response = Client(raise_request_exception=False).get("/api/v1/test-failing-plain/")
    body = problem(response, 500, "internal_error")
    assert SECRET not in response.content.decode()
    assert body["offenders"] == []
