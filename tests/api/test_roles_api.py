"""Role matrix: each role × each operation; allowed ⇒ 2xx, otherwise 403
role_required (reads: disclosure_not_decided for a role without a read decision);
unauthenticated ⇒ 401 everywhere."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from policies import governance
from tests import factories
from tests.api.helpers import client_for, if_match, problem, register_body

ROLES = ("curator", "reviewer", "access_steward", "steward", "projection_agent", "outsider")


def _link(world):
    return factories.register_link(world.curator, world.dimension, world.profile, world.passage)


def _decision(world):
    governance.record_disclosure_decision(
        actor=world.access_steward,
        dimension=world.dimension,
        values={
            "decision_ref": "urn:access:roles",
            "recipient_scope": "partner:acme",
            "purpose": "citation-display",
            "fields": ["statement"],
        },
    )


def _set(world, link):
    from grounding import services

    services.create_evidence_set(
        actor=world.curator,
        values={"evidence_set_ref": "urn:set:roles", "dimension": world.dimension.name},
    )


# name: (allowed roles, request builder(world, client) -> response)
OPERATIONS: dict[str, tuple[set[str], Callable]] = {
    "register": (
        {"curator"},
        lambda w, c: c.post("/api/v1/groundings/", register_body(w), format="json"),
    ),
    "bulk_register": (
        {"curator"},
        lambda w, c: c.post(
            "/api/v1/groundings/bulk/", {"items": [register_body(w)]}, format="json"
        ),
    ),
    "revise": (
        {"curator"},
        lambda w, c: c.patch(
            f"/api/v1/groundings/{_link(w).grounding_id}/",
            {"owner_ref": "role:x", "revision_reason": "r"},
            format="json",
            **if_match(1),
        ),
    ),
    "assessment": (
        {"reviewer"},
        lambda w, c: c.post(
            f"/api/v1/groundings/{_link(w).grounding_id}/assessments/",
            factories.assessment_body(1),
            format="json",
            **if_match(1),
        ),
    ),
    "anchor_observation": (
        {"curator", "reviewer"},
        lambda w, c: c.post(
            f"/api/v1/groundings/{_link(w).grounding_id}/anchor-observations/",
            {"resolver": "builtin"},
            format="json",
            **if_match(1),
        ),
    ),
    "withdrawal": (
        {"curator", "access_steward"},
        lambda w, c: c.post(
            f"/api/v1/groundings/{_link(w).grounding_id}/withdrawal/",
            {"reason": "r", "authority_ref": "urn:policy:r"},
            format="json",
            **if_match(1),
        ),
    ),
    "disposal": (
        {"access_steward"},
        lambda w, c: c.post(
            f"/api/v1/groundings/{_link(w).grounding_id}/disposal/",
            {"receipt_ref": "urn:receipt:1", "policy_ref": "urn:policy:p"},
            format="json",
            **if_match(1),
        ),
    ),
    "projection": (
        {"projection_agent"},
        lambda w, c: (
            _decision(w),
            c.get(
                f"/api/v1/groundings/{_link(w).grounding_id}/projection/",
                {"recipient": "partner:acme", "purpose": "citation-display"},
            ),
        )[1],
    ),
    "evidence_set_create": (
        {"curator"},
        lambda w, c: c.post(
            "/api/v1/evidence-sets/",
            {
                "evidence_set_ref": "urn:set:r",
                "dimension": w.dimension.name,
                "members": [
                    {"grounding_id": str(_link(w).grounding_id), "membership_role": "premise"}
                ],
            },
            format="json",
        ),
    ),
    "evidence_set_member_add": (
        {"curator"},
        lambda w, c: (
            _set(w, None),
            c.post(
                "/api/v1/evidence-sets/urn:set:roles/members/",
                {"grounding_id": str(_link(w).grounding_id), "membership_role": "context"},
                format="json",
                **if_match(1),
            ),
        )[1],
    ),
    "disclosure_decision_create": (
        {"access_steward"},
        lambda w, c: c.post(
            "/api/v1/disclosure-decisions/",
            {
                "decision_ref": "urn:access:m",
                "dimension": w.dimension.name,
                "recipient_scope": "partner:acme",
                "purpose": "citation-display",
                "fields": ["statement"],
            },
            format="json",
        ),
    ),
    "dimension_create": (
        set(),  # an operator's act (API.md "Tenancy"): no Dimension role allows it
        lambda w, c: c.post(
            "/api/v1/dimensions/",
            {
                "name": "made-by-api",
                "namespace": "urn:x",
                "policy_package_ref": "urn:p",
                "disposition_policy_ref": "urn:r",
                "disclosure_policy_ref": "urn:d",
                "safety_policy_ref": "urn:s",
                "owner_ref": "role:o",
            },
            format="json",
        ),
    ),
    "profile_create": (
        {"steward"},
        lambda w, c: c.post(
            "/api/v1/profiles/",
            {
                "dimension": w.dimension.name,
                "name": "p",
                "version": "9.0.0",
                "support_vocabulary": ["quotation"],
                "selector_profiles": ["nfc-codepoint-halfopen@1"],
                "mapping_profile_ref": "urn:m",
                "endpoint_role_map": {"statement": "target"},
            },
            format="json",
        ),
    ),
}

MATRIX = [(op, role) for op in sorted(OPERATIONS) for role in ROLES]


@pytest.mark.parametrize(("operation", "role"), MATRIX)
def test_each_operation_is_allowed_exactly_to_its_roles(world, operation, role):
    allowed, send = OPERATIONS[operation]
    response = send(world, client_for(getattr(world, role)))
    if operation in OPERATOR_ONLY:
        problem(response, 403, "operator_required")
    elif role in allowed:
        assert response.status_code in (200, 201), (operation, role, response.content[:300])
    elif role == "outsider" and operation not in NOT_IN_A_DIMENSION:
        # Outside the caller's Dimensions nothing exists: a link-bound operation is
        # 404, a body naming the Dimension has an unknown reference.
        if operation in NAMES_A_DIMENSION:
            body = problem(response, 400, "validation_error")
            assert [o["code"] for o in body["offenders"]] == ["unknown_reference"]
        else:
            problem(response, 404, "not_found")
    else:
        problem(response, 403, "role_required")


READERS = {"curator", "reviewer", "access_steward", "steward"}
# Operators' acts: every role, and no role, gets operator_required, whatever the body.
OPERATOR_ONLY = {"dimension_create"}
# Operations bound to no Dimension: without the role anywhere, role_required.
NOT_IN_A_DIMENSION = {"dimension_create"}
NAMES_A_DIMENSION = {
    "profile_create",
    "register",
    "bulk_register",
    "evidence_set_create",
    "disclosure_decision_create",
}


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("suffix", ["", "revisions/", "revisions/1/"])
def test_reading_a_link_needs_a_role_and_a_read_decision(world, role, suffix):
    link = _link(world)
    response = client_for(getattr(world, role)).get(
        f"/api/v1/groundings/{link.grounding_id}/{suffix}"
    )
    if role in READERS:
        assert response.status_code == 200
    elif role == "outsider":
        problem(response, 404, "not_found")
    else:
        problem(response, 403, "disclosure_not_decided")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/v1/groundings/"),
        ("post", "/api/v1/groundings/"),
        ("post", "/api/v1/groundings/bulk/"),
        ("get", "/api/v1/groundings/01900000-0000-7000-8000-000000000000/"),
        ("patch", "/api/v1/groundings/01900000-0000-7000-8000-000000000000/"),
        ("post", "/api/v1/groundings/01900000-0000-7000-8000-000000000000/assessments/"),
        ("post", "/api/v1/groundings/01900000-0000-7000-8000-000000000000/withdrawal/"),
        ("get", "/api/v1/groundings/01900000-0000-7000-8000-000000000000/revisions/"),
        ("get", "/api/v1/groundings/01900000-0000-7000-8000-000000000000/projection/"),
        ("post", "/api/v1/evidence-sets/"),
        ("get", "/api/v1/evidence-sets/urn:set:x/"),
        ("get", "/api/v1/disclosure-decisions/"),
        ("post", "/api/v1/dimensions/"),
        ("get", "/api/v1/profiles/"),
    ],
)
def test_unauthenticated_requests_are_401(db, method, path):
    response = getattr(client_for(None), method)(path, {}, format="json")
    problem(response, 401, "not_authenticated")
