"""Odd path keys (a Unicode digit, a lone surrogate, an over-long key, U+0000) are a
400/404 problem, never a 500: `isdigit()` admits "²", which `int()` refuses, and
"٣", which `int()` reads as 3 (#26)."""

from __future__ import annotations

import pytest

from policies import governance
from policies.models import AuditEvent, DisclosureDecision
from tests.api.helpers import PROBLEM, client_for, problem

DECISIONS = "/api/v1/disclosure-decisions/"
ODD_KEYS = {
    "superscript-two": "%C2%B2",
    "arabic-indic-three": "%D9%A3",
    "lone-surrogate": "%ED%A0%80",
    "300-characters": "k" * 300,
    "nul": "%00",
    "fullwidth-three": "%EF%BC%93",
}


@pytest.fixture
def decisions(world) -> list[DisclosureDecision]:
    """Three decisions, so that ids 1 to 3 are likely taken (a key read as 3 would
    find one)."""
    return [
        governance.record_disclosure_decision(
            actor=world.access_steward,
            dimension=world.dimension,
            values={
                "decision_ref": f"urn:access:odd:{n}",
                "recipient_scope": "role:reviewer",
                "purpose": "review",
                "fields": ["statement"],
                "grounding_ids": None,
            },
        )
        for n in range(3)
    ]


@pytest.mark.parametrize("key", ODD_KEYS.values(), ids=ODD_KEYS.keys())
@pytest.mark.parametrize("method", ["get", "delete"])
def test_an_odd_decision_key_is_a_problem_never_a_500(world, decisions, key, method):
    response = getattr(client_for(world.access_steward), method)(f"{DECISIONS}{key}/")
    assert response.status_code in (400, 404), (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith(PROBLEM)
    assert response.json()["code"] in ("not_found", "validation_error")
    # Nothing was revoked: no odd key names a decision.
    assert DisclosureDecision.objects.filter(revoked_at__isnull=False).count() == 0


def test_a_unicode_digit_names_no_decision_and_its_refusal_is_audited(world, decisions):
    client = client_for(world.access_steward)
    body = problem(client.delete(f"{DECISIONS}%C2%B2/"), 404, "not_found")
    assert body["offenders"] == []
    problem(client.delete(f"{DECISIONS}%D9%A3/"), 404, "not_found")
    assert list(
        AuditEvent.objects.filter(action="revoke_disclosure_decision")
        .order_by("occurred_at", "event_id")
        .values_list("outcome", "code")
    ) == [("refused", "not_found"), ("refused", "not_found")]


def test_an_ascii_id_still_names_its_decision(world, decisions):
    decision = decisions[0]
    response = client_for(world.access_steward).get(f"{DECISIONS}{decision.pk}/")
    assert response.status_code == 200, response.content[:300]
    assert response.json()["decision_ref"] == "urn:access:odd:0"
