"""Helpers for the API tests: token clients, problem assertions, life-cycle steps."""

from __future__ import annotations

import json
from typing import Any

from rest_framework.test import APIClient

from tests import factories

PROBLEM = "application/problem+json"


def client_for(user) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {factories.token_for(user)}")
    return client


def url(grounding_id, suffix: str = "") -> str:
    return f"/api/v1/groundings/{grounding_id}/{suffix}"


def if_match(revision: int | str) -> dict[str, str]:
    return {"HTTP_IF_MATCH": f'"{revision}"' if isinstance(revision, int) else revision}


def problem(response, status: int, code: str) -> dict[str, Any]:
    """Assert a problem+json error with this status and code; return its body."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    assert response["Content-Type"].startswith(PROBLEM), response["Content-Type"]
    body = response.json()
    assert body["code"] == code, body
    assert body["status"] == status
    assert body["type"] == f"urn:grounding:problem:{code}"
    assert isinstance(body["title"], str) and body["title"]
    assert isinstance(body["detail"], str) and body["detail"]
    assert isinstance(body["offenders"], list)
    assert "Traceback" not in response.content.decode()
    return body


def pointers(body: dict[str, Any]) -> list[str]:
    return sorted(o["pointer"] for o in body["offenders"])


def register_body(world, external: bool = False, **overrides) -> dict[str, Any]:
    """A register payload; top-level members (dimension, profile included) overridden."""
    payload = factories.link_payload(
        world.dimension, world.profile, None if external else world.passage
    )
    payload.update(overrides)
    return payload


def register(world, client=None, **overrides) -> dict[str, Any]:
    client = client or client_for(world.curator)
    response = client.post("/api/v1/groundings/", register_body(world, **overrides), format="json")
    assert response.status_code == 201, response.content
    return response.json()


def assess(world, grounding_id, revision: int, **overrides):
    return client_for(world.reviewer).post(
        url(grounding_id, "assessments/"),
        factories.assessment_body(revision, **overrides),
        format="json",
        **if_match(revision),
    )


def builtin_observation(world, grounding_id, revision: int):
    return client_for(world.curator).post(
        url(grounding_id, "anchor-observations/"),
        {"resolver": "builtin"},
        format="json",
        **if_match(revision),
    )


def restrict_curators_to(world, fields: list[str], grounding_ids=None) -> None:
    """Replace the curators' internal decision by one covering only `fields`."""
    from policies import governance
    from policies.models import DisclosureDecision

    internal = DisclosureDecision.objects.get(
        dimension=world.dimension, recipient_scope="role:curator", internal=True
    )
    governance.revoke_disclosure_decision(actor=world.access_steward, decision=internal)
    governance.record_disclosure_decision(
        actor=world.access_steward,
        dimension=world.dimension,
        values={
            "decision_ref": f"urn:test:curators:{'+'.join(fields) or 'none'}",
            "recipient_scope": "role:curator",
            "purpose": "curation",
            "fields": fields,
            "grounding_ids": grounding_ids,
        },
    )


class Nested:
    """`levels` arrays around a string, spliced in as raw JSON: json.dumps itself
    could not encode a Python value this deep."""

    def __init__(self, levels: int) -> None:
        self.levels = levels


def raw_json(body) -> str:
    """`body` as JSON, each Nested spliced in as raw text."""
    holes: list[Nested] = []

    def hole(value):
        if isinstance(value, Nested):
            holes.append(value)
            return f"@@{len(holes) - 1}@@"
        raise TypeError(value)

    raw = json.dumps(body, default=hole)
    for index, nested in enumerate(holes):
        raw = raw.replace(f'"@@{index}@@"', "[" * nested.levels + '"leaf"' + "]" * nested.levels)
    return raw
