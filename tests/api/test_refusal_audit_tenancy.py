"""A refused request is audited under a Dimension only when the caller holds a role
there; otherwise under none, where operators see it (API.md "Tenancy")."""

from __future__ import annotations

import pytest

from grounding.management.demo_data import demo_wsp_response
from policies.choices import Role
from policies.models import AuditEvent
from tests import factories
from tests.api.helpers import client_for, if_match, problem, register_body, url


@pytest.fixture
def stranger(world):
    """A curator and access steward of another Dimension, with no role in world's."""
    elsewhere = factories.make_dimension()
    return factories.user_with_roles(elsewhere, Role.CURATOR, Role.ACCESS_STEWARD)


def _refused(user) -> list[tuple[str, str, str]]:
    return list(
        AuditEvent.objects.filter(actor=user, outcome="refused")
        .order_by("occurred_at", "event_id")
        .values_list("action", "code", "dimension_ref")
    )


def test_a_strangers_refused_requests_are_audited_under_no_dimension(world, link, stranger):
    client = client_for(stranger)
    body = problem(
        client.post("/api/v1/groundings/", register_body(world), format="json"),
        400,
        "validation_error",
    )
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [
        ("/dimension", "unknown_reference")
    ]
    problem(client.get(url(link.grounding_id)), 404, "not_found")
    problem(
        client.post(
            url(link.grounding_id, "disposal/"),
            {"receipt_ref": "urn:r:1", "policy_ref": "urn:p:1"},
            format="json",
            **if_match(1),
        ),
        404,
        "not_found",
    )
    problem(
        client.post(
            f"/api/v1/evidence/wsp-imports/?dimension={world.dimension.name}",
            demo_wsp_response(),
            format="json",
        ),
        404,
        "not_found",
    )
    assert _refused(stranger) == [
        ("register", "validation_error", ""),
        ("read", "not_found", ""),
        ("dispose", "not_found", ""),
        ("wsp_import", "not_found", ""),
    ]
    assert not AuditEvent.objects.filter(
        actor=stranger, dimension_ref=world.dimension.name
    ).exists()


def test_a_members_refused_request_is_audited_under_the_dimension(world, link):
    problem(
        client_for(world.reviewer).post("/api/v1/groundings/", register_body(world), format="json"),
        403,
        "role_required",
    )
    assert _refused(world.reviewer) == [("register", "role_required", world.dimension.name)]


def test_a_name_that_is_no_dimension_of_the_caller_is_not_recorded(world):
    body = register_body(world, dimension="no-such-dimension")
    client = client_for(world.curator)
    problem(client.post("/api/v1/groundings/", body, format="json"), 400, "validation_error")
    assert _refused(world.curator) == [("register", "validation_error", "")]


def test_operators_see_the_refusals_audited_under_no_dimension(world, link, stranger):
    problem(client_for(stranger).get(url(link.grounding_id)), 404, "not_found")
    operator = factories.UserFactory(is_superuser=True, is_staff=True)
    events = client_for(operator).get("/api/v1/audit-events/", {"outcome": "refused"}).json()
    assert [(e["action"], e["code"], e["dimension"]) for e in events["results"]] == [
        ("read", "not_found", "")
    ]
    steward = client_for(world.steward).get("/api/v1/audit-events/", {"outcome": "refused"})
    assert steward.json()["results"] == []
