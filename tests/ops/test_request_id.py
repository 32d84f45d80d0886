"""Every response carries X-Request-ID; audit events written during the request carry it too."""

from __future__ import annotations

import re

import pytest

from policies.models import AuditEvent

pytestmark = pytest.mark.urls("tests.ops.urls")

GENERATED = re.compile(r"^[0-9a-f]{32}$")


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/no-such-page/"])
def test_every_response_has_a_request_id(client, db, path):
    response = client.get(path)
    assert GENERATED.match(response["X-Request-ID"])


def test_each_request_gets_its_own_id(client, db):
    first = client.get("/healthz")["X-Request-ID"]
    second = client.get("/healthz")["X-Request-ID"]
    assert first != second


def test_a_safe_supplied_id_is_echoed(client, db):
    supplied = "lb-7f3a:2024.06.01_abc-123"
    response = client.get("/healthz", headers={"X-Request-ID": supplied})
    assert response["X-Request-ID"] == supplied


@pytest.mark.parametrize(
    "supplied",
    [
        "has spaces in it",
        "line\nbreak",
        'quote"d',
        "<script>",
        "x" * 129,
    ],
)
def test_an_unsafe_supplied_id_is_replaced(client, db, supplied):
    response = client.get("/healthz", headers={"X-Request-ID": supplied})
    assert response["X-Request-ID"] != supplied
    assert GENERATED.match(response["X-Request-ID"])


def test_an_audit_event_carries_the_request_id(client, db):
    response = client.get("/audited/", headers={"X-Request-ID": "trace-42"})
    assert response.status_code == 200
    event = AuditEvent.objects.get(event_id=response.json()["event_id"])
    assert event.request_id == "trace-42" == response["X-Request-ID"]


def test_a_generated_id_is_the_one_the_audit_event_carries(client, db):
    response = client.get("/audited/")
    event = AuditEvent.objects.get(event_id=response.json()["event_id"])
    assert event.request_id == response["X-Request-ID"]
    assert GENERATED.match(event.request_id)
