"""A Dimension is a boundary for its decisions, its profiles and its creation
(docs/api.md "Tenancy"): another Dimension's resource answers exactly as one that
does not exist, and refs are unique per Dimension only."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from common.kernel.refusals import Refusal
from policies import governance
from policies.choices import ProfileStatus, Role
from policies.models import AuditEvent, Dimension, DisclosureDecision, Profile
from tests import factories
from tests.api.helpers import client_for, problem

DECISIONS = "/api/v1/disclosure-decisions/"
PROFILES = "/api/v1/profiles/"
INTERNAL_REFS = [
    "urn:access:internal:access_steward",
    "urn:access:internal:curator",
    "urn:access:internal:reviewer",
    "urn:access:internal:steward",
]


@pytest.fixture
def other(world):
    """A second Dimension with its own staff, where world's users hold no role."""
    dimension = factories.make_dimension("other-tenant")
    return {
        "dimension": dimension,
        "steward": factories.user_with_roles(dimension, Role.STEWARD),
        "access_steward": factories.user_with_roles(dimension, Role.ACCESS_STEWARD),
        "curator": factories.user_with_roles(dimension, Role.CURATOR),
    }


def _decision(dimension, ref="urn:access:d9", **overrides):
    return {
        "decision_ref": ref,
        "dimension": dimension.name,
        "recipient_scope": "partner:acme",
        "purpose": "citation-display",
        "fields": ["statement"],
        **overrides,
    }


def _answer(client, method: str, path: str):
    """(status, body, number of queries) of one request."""
    with CaptureQueriesContext(connection) as queries:
        response = getattr(client, method)(path)
    return response.status_code, response.json(), len(queries.captured_queries)


def _profile_values(version: str = "5.0.0", **overrides):
    return {
        "name": "house",
        "version": version,
        "support_vocabulary": ["quotation"],
        "selector_profiles": ["nfc-codepoint-halfopen@1"],
        "mapping_profile_ref": "urn:grounding:mapping:web-annotation@1",
        "endpoint_role_map": {"statement": "target", "passage": "body"},
        **overrides,
    }


def _own_profile(dimension, steward, *, version="5.0.0", publish=True) -> Profile:
    profile = governance.create_profile(
        actor=steward, values=_profile_values(version), dimension=dimension
    )
    if publish:
        governance.publish_profile(actor=steward, profile=profile)
    return profile


# -- disclosure decisions ---------------------------------------------------------------


def test_the_same_decision_ref_in_two_dimensions_is_two_decisions(world, other):
    mine = client_for(world.access_steward)
    theirs = client_for(other["access_steward"])
    assert theirs.post(DECISIONS, _decision(other["dimension"]), format="json").status_code == 201
    # Not a 409: another Dimension's refs are never consulted.
    created = mine.post(DECISIONS, _decision(world.dimension, purpose="review"), format="json")
    assert created.status_code == 201

    read = mine.get(f"{DECISIONS}urn:access:d9/")
    assert read.status_code == 200
    assert (read.json()["dimension"], read.json()["purpose"]) == (world.dimension.name, "review")
    assert "other-tenant" not in read.content.decode()
    listed = [(d["decision_ref"], d["dimension"]) for d in mine.get(DECISIONS).json()]
    assert ("urn:access:d9", world.dimension.name) in listed
    assert all(dimension == world.dimension.name for _, dimension in listed)

    assert mine.delete(f"{DECISIONS}urn:access:d9/").status_code == 204
    refs = DisclosureDecision.objects.filter(decision_ref="urn:access:d9")
    assert {d.dimension.name: d.revoked_at is None for d in refs} == {
        "other-tenant": True,
        world.dimension.name: False,
    }


def test_another_dimensions_decision_answers_exactly_as_an_unknown_ref(world, other):
    governance.record_disclosure_decision(
        actor=other["access_steward"],
        dimension=other["dimension"],
        values={k: v for k, v in _decision(other["dimension"], "urn:access:theirs").items()
                if k != "dimension"},
    )  # fmt: skip
    client = client_for(world.access_steward)
    _answer(client, "get", f"{DECISIONS}urn:access:warm-up/")  # the token's first use
    for method in ("get", "delete"):
        theirs = _answer(client, method, f"{DECISIONS}urn:access:theirs/")
        unknown = _answer(client, method, f"{DECISIONS}urn:access:nothing/")
        assert theirs == unknown
        assert theirs[0] == 404 and theirs[1]["code"] == "not_found"
    assert DisclosureDecision.objects.get(decision_ref="urn:access:theirs").revoked_at is None


def test_internal_decision_refs_name_no_dimension(db):
    first = factories.make_dimension("acme-confidential")
    second = factories.make_dimension("globex")
    for dimension in (first, second):
        refs = sorted(dimension.disclosure_decisions.values_list("decision_ref", flat=True))
        assert refs == INTERNAL_REFS
    steward = factories.user_with_roles(first, Role.STEWARD)
    client = client_for(steward)
    # Guessing another Dimension's name in the old form of the ref confirms nothing.
    for ref in ("urn:grounding:globex:internal:curator", "urn:grounding:nope:internal:curator"):
        problem(client.get(f"{DECISIONS}{ref}/"), 404, "not_found")
    read = client.get(f"{DECISIONS}urn:access:internal:curator/")
    assert read.status_code == 200 and read.json()["dimension"] == "acme-confidential"


def test_a_ref_in_two_of_the_callers_dimensions_is_told_apart_by_naming_the_dimension(world, other):
    both = factories.user_with_roles(other["dimension"], Role.ACCESS_STEWARD)
    governance.grant_role(actor=None, dimension=world.dimension, user=both, role=Role.STEWARD)
    client = client_for(both)
    ref = f"{DECISIONS}urn:access:internal:curator/"

    body = problem(client.get(ref), 400, "dimension_required")
    assert "other-tenant" not in body["detail"] and world.dimension.name not in body["detail"]
    read = client.get(f"{ref}?dimension=other-tenant")
    assert read.status_code == 200 and read.json()["dimension"] == "other-tenant"
    read = client.get(f"{ref}?dimension={world.dimension.name}")
    assert read.status_code == 200 and read.json()["dimension"] == world.dimension.name
    # A Dimension of someone else's, or none, names nothing of the caller's.
    outsider = client_for(world.access_steward)
    assert _answer(outsider, "get", f"{ref}?dimension=other-tenant") == _answer(
        outsider, "get", f"{ref}?dimension=no-such-dimension"
    )
    problem(client.get(f"{ref}?dimension=no-such-dimension"), 404, "not_found")

    problem(client.delete(ref), 400, "dimension_required")
    assert client.delete(f"{ref}?dimension=other-tenant").status_code == 204
    revoked = DisclosureDecision.objects.filter(
        decision_ref="urn:access:internal:curator", revoked_at__isnull=False
    )
    assert [d.dimension.name for d in revoked] == ["other-tenant"]


# -- creating a Dimension ---------------------------------------------------------------


NEW_DIMENSION = {
    "name": "newsroom",
    "namespace": "urn:grounding:newsroom",
    "policy_package_ref": "urn:policy:newsroom@1",
    "disposition_policy_ref": "urn:policy:newsroom:retention@1",
    "disclosure_policy_ref": "urn:policy:newsroom:disclosure@1",
    "safety_policy_ref": "urn:policy:newsroom:safety@1",
    "owner_ref": "role:grounding-curator",
}


@pytest.mark.parametrize(
    "role", ["steward", "curator", "reviewer", "access_steward", "projection_agent", "outsider"]
)
def test_only_an_operator_creates_a_dimension_whatever_the_name(world, other, role):
    client = client_for(getattr(world, role))
    answers = []
    for body in (
        NEW_DIMENSION,
        {**NEW_DIMENSION, "name": world.dimension.name},
        {**NEW_DIMENSION, "name": "other-tenant"},
        {**NEW_DIMENSION, "name": "Not A Slug!"},
    ):
        response = client.post("/api/v1/dimensions/", body, format="json")
        answers.append(problem(response, 403, "operator_required"))
    assert all(answer == answers[0] for answer in answers)
    assert answers[0]["offenders"] == []
    assert not Dimension.objects.filter(name="newsroom").exists()
    refused = AuditEvent.objects.filter(action="create_dimension", outcome="refused")
    assert sorted(refused.values_list("code", "dimension_ref")) == [("operator_required", "")] * 4


def test_the_create_dimension_operation_itself_needs_an_operator(world):
    with pytest.raises(Refusal) as refused:
        governance.create_dimension(actor=world.steward, values=NEW_DIMENSION)
    assert refused.value.code == "operator_required"
    operator = factories.UserFactory(is_superuser=True)
    created = governance.create_dimension(actor=operator, values=NEW_DIMENSION)
    assert created.name == "newsroom"


# -- profiles ---------------------------------------------------------------------------


def test_a_steward_cannot_publish_another_dimensions_profile(world, other):
    theirs = _own_profile(other["dimension"], other["steward"], publish=False)
    client = client_for(world.steward)
    _answer(client, "get", PROFILES)  # the token's first use
    answer = _answer(client, "post", f"{PROFILES}{theirs.ref}/publish/")
    assert answer == _answer(client, "post", f"{PROFILES}house@9.9.9/publish/")
    assert answer[0] == 404 and answer[1]["code"] == "not_found"
    theirs.refresh_from_db()
    assert theirs.status == ProfileStatus.DRAFT
    # Its own steward publishes it.
    response = client_for(other["steward"]).post(f"{PROFILES}{theirs.ref}/publish/")
    assert response.status_code == 200 and response.json()["dimension"] == "other-tenant"


def test_a_shared_profile_is_published_by_operators_only(world):
    shared = factories.make_profile(publish=False, version="6.0.0")
    for user in (world.steward, world.curator):
        problem(client_for(user).post(f"{PROFILES}{shared.ref}/publish/"), 403, "operator_required")
    shared.refresh_from_db()
    assert shared.status == ProfileStatus.DRAFT
    problem(client_for(world.steward).post(PROFILES, _profile_values(), format="json"), 403,
            "operator_required")  # fmt: skip
    operator = client_for(factories.UserFactory(is_superuser=True))
    assert operator.post(f"{PROFILES}{shared.ref}/publish/").status_code == 200


def test_the_profile_list_holds_the_shared_ones_and_the_callers_dimensions_own(world, other):
    _own_profile(world.dimension, world.steward, version="5.0.0")
    _own_profile(other["dimension"], other["steward"], version="5.0.1")
    listed = client_for(world.curator).get(PROFILES).json()
    assert sorted((p["ref"], p["dimension"]) for p in listed) == [
        ("house@5.0.0", world.dimension.name),
        (world.profile.ref, None),
    ]
    operator = client_for(factories.UserFactory(is_superuser=True))
    assert len(operator.get(PROFILES).json()) == 3


def test_the_same_profile_ref_in_two_dimensions_is_two_profiles(world, other):
    for dimension, steward in ((other["dimension"], other["steward"]),
                               (world.dimension, world.steward)):  # fmt: skip
        response = client_for(steward).post(
            PROFILES, {**_profile_values(), "dimension": dimension.name}, format="json"
        )
        assert response.status_code == 201, response.content
    published = client_for(world.steward).post(f"{PROFILES}house@5.0.0/publish/")
    assert published.status_code == 200 and published.json()["dimension"] == world.dimension.name
    states = Profile.objects.filter(name="house").values_list("dimension__name", "status")
    assert dict(states) == {"other-tenant": "draft", world.dimension.name: "published"}


def test_a_profile_of_a_dimension_without_a_role_names_an_unknown_dimension(world, other):
    client = client_for(world.steward)
    answers = [
        client.post(PROFILES, {**_profile_values(), "dimension": name}, format="json")
        for name in ("other-tenant", "no-such-dimension")
    ]
    bodies = [problem(response, 400, "validation_error") for response in answers]
    assert bodies[0] == bodies[1]
    assert [(o["pointer"], o["code"]) for o in bodies[0]["offenders"]] == [
        ("/dimension", "unknown_reference")
    ]
    assert not Profile.objects.filter(name="house").exists()


def test_a_link_uses_a_shared_profile_or_its_own_dimensions_only(world, other):
    theirs = _own_profile(other["dimension"], other["steward"], version="5.0.1")
    mine = _own_profile(world.dimension, world.steward, version="5.0.0")
    client = client_for(world.curator)
    offenders = []
    for ref in (theirs.ref, "house@9.9.9"):
        body = factories.link_payload(world.dimension, world.profile, world.passage)
        response = client.post("/api/v1/groundings/", {**body, "profile": ref}, format="json")
        offenders.append(problem(response, 400, "validation_error")["offenders"])
    assert offenders[0] == offenders[1]
    assert [(o["pointer"], o["code"]) for o in offenders[0]] == [("/profile", "unknown_reference")]
    for profile in (mine, world.profile):
        body = factories.link_payload(world.dimension, profile, world.passage)
        response = client.post("/api/v1/groundings/", body, format="json")
        assert response.status_code == 201, response.content
        assert response.json()["profile"] == profile.ref


def test_governance_enforces_who_governs_a_profile(world, other):
    """The admin's publish and retire actions call these entries: they inherit it."""
    draft = _own_profile(world.dimension, world.steward, publish=False)
    shared = factories.make_profile(publish=False, version="6.0.0")
    cases = [
        (other["steward"], draft, "not_found"),
        (world.curator, draft, "role_required"),
        (world.steward, shared, "operator_required"),
    ]
    for actor, profile, code in cases:
        with pytest.raises(Refusal) as refused:
            governance.publish_profile(actor=actor, profile=profile)
        assert refused.value.code == code
    governance.publish_profile(actor=world.steward, profile=draft)
    for actor, profile, code in [(other["steward"], draft, "not_found"),
                                 (world.curator, draft, "role_required")]:  # fmt: skip
        with pytest.raises(Refusal) as refused:
            governance.retire_profile(actor=actor, profile=profile)
        assert refused.value.code == code
    governance.retire_profile(actor=world.steward, profile=draft)
    draft.refresh_from_db()
    assert draft.status == ProfileStatus.RETIRED
    # A refusal is audited under the Dimension only for a caller holding a role there.
    refused = AuditEvent.objects.filter(outcome="refused").order_by("occurred_at", "event_id")
    assert list(refused.values_list("action", "code", "dimension_ref")) == [
        ("publish_profile", "not_found", ""),
        ("publish_profile", "role_required", world.dimension.name),
        ("publish_profile", "operator_required", ""),
        ("retire_profile", "not_found", ""),
        ("retire_profile", "role_required", world.dimension.name),
    ]


@pytest.mark.parametrize("ref", ["a%00b@1.0.0", "%01@1.0.0"])
def test_a_profile_ref_with_control_characters_names_no_profile(world, ref):
    problem(client_for(world.steward).post(f"{PROFILES}{ref}/publish/"), 404, "not_found")
    problem(
        client_for(world.steward).post(f"{PROFILES}{world.profile.ref}/publish/?dimension=a%00b"),
        404,
        "not_found",
    )
