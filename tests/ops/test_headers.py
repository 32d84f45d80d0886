"""Every API answer is `Cache-Control: no-store`; every HTML page carries the
Content-Security-Policy (no inline script or style, no framing)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "font-src": "'self'",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def policy(response) -> dict[str, str]:
    directives = (part.strip() for part in response["Content-Security-Policy"].split(";"))
    return dict(d.split(" ", 1) for d in directives if d)


@pytest.mark.django_db
def test_api_answers_are_no_store_whatever_their_status(world, link):
    client = APIClient()
    client.force_authenticate(world.curator)
    read = client.get(f"/api/v1/groundings/{link.pk}/")
    answers = {
        "read": read,
        "list": client.get("/api/v1/groundings/"),
        "not modified": client.get(
            f"/api/v1/groundings/{link.pk}/", HTTP_IF_NONE_MATCH=read["ETag"]
        ),
        "refused": client.post("/api/v1/groundings/bulk/", {"items": []}, format="json"),
        "unknown path": client.get("/api/v1/nothing-here/"),
        "anonymous": APIClient().get("/api/v1/groundings/"),
        "schema": client.get("/api/schema/"),
    }
    statuses = {name: r.status_code for name, r in answers.items()}
    assert statuses == {
        "read": 200, "list": 200, "not modified": 304, "refused": 400,
        "unknown path": 404, "anonymous": 401, "schema": 200,
    }  # fmt: skip
    assert {name: r["Cache-Control"] for name, r in answers.items()} == dict.fromkeys(
        answers, "no-store"
    )


@pytest.mark.django_db
def test_html_pages_carry_the_policy(world, link):
    world.curator.is_staff = True
    world.curator.save()
    client = Client()
    client.force_login(world.curator)
    pages = {
        "admin login": Client().get(reverse("admin:login")),
        "admin changelist": client.get(reverse("admin:grounding_groundinglink_changelist")),
        "link page": client.get(reverse("grounding-page", args=[link.pk])),
        "swagger ui": Client().get("/api/docs/"),
        "not found page": Client().get("/no-such-page/"),
    }
    assert {name: r.status_code for name, r in pages.items()} == {
        "admin login": 200, "admin changelist": 200, "link page": 200,
        "swagger ui": 200, "not found page": 404,
    }  # fmt: skip
    for name, response in pages.items():
        assert policy(response) == POLICY, name
    assert "<style>" not in pages["swagger ui"].content.decode()
    assert "<script>" not in pages["swagger ui"].content.decode()


def test_healthz_keeps_its_own_cache_control(client):
    response = client.get("/healthz")
    assert "no-cache" in response["Cache-Control"] and "no-store" in response["Cache-Control"]
