"""Disclosure decisions, Dimensions and profiles over the API."""

from policies.choices import Role
from policies.models import DimensionMembership, DisclosureDecision, Profile
from tests import factories
from tests.api.helpers import client_for, pointers, problem

DECISIONS = "/api/v1/disclosure-decisions/"


def _decision(world, **overrides):
    body = {
        "decision_ref": "urn:access:d9",
        "dimension": world.dimension.name,
        "recipient_scope": "partner:acme",
        "purpose": "citation-display",
        "fields": ["statement", "support", "passage.locator", "passage.title"],
        "grounding_ids": None,
        "valid_until": None,
    }
    body.update(overrides)
    return body


def test_an_access_steward_records_reads_and_revokes_a_decision(world):
    client = client_for(world.access_steward)
    created = client.post(DECISIONS, _decision(world), format="json")
    assert created.status_code == 201
    body = created.json()
    assert body["decision_ref"] == "urn:access:d9"
    assert body["dimension"] == world.dimension.name
    assert body["fields"] == ["passage.locator", "passage.title", "statement", "support"]
    assert body["grounding_ids"] is None
    assert body["revoked_at"] is None
    assert body["internal"] is False

    listed = [d["decision_ref"] for d in client.get(DECISIONS).json()]
    assert "urn:access:d9" in listed
    assert "urn:access:internal:curator" in listed
    by_ref = client.get(f"{DECISIONS}urn:access:d9/")
    assert by_ref.status_code == 200 and by_ref.json()["id"] == body["id"]
    by_id = client.get(f"{DECISIONS}{body['id']}/")
    assert by_id.json()["decision_ref"] == "urn:access:d9"

    revoked = client.delete(f"{DECISIONS}urn:access:d9/?reason=expired")
    assert revoked.status_code == 204
    decision = DisclosureDecision.objects.get(decision_ref="urn:access:d9")
    assert decision.revoked_at is not None
    assert decision.revocation_reason == "expired"
    problem(client.delete(f"{DECISIONS}urn:access:d9/"), 409, "decision_revoked")


def test_a_decision_limited_to_listed_links_keeps_them(world, link):
    response = client_for(world.access_steward).post(
        DECISIONS, _decision(world, grounding_ids=[str(link.grounding_id)]), format="json"
    )
    assert response.status_code == 201
    assert response.json()["grounding_ids"] == [str(link.grounding_id)]


def test_recording_a_decision_needs_the_access_steward_role(world):
    response = client_for(world.curator).post(DECISIONS, _decision(world), format="json")
    problem(response, 403, "role_required")
    assert not DisclosureDecision.objects.filter(decision_ref="urn:access:d9").exists()
    problem(client_for(world.curator).get(f"{DECISIONS}urn:grounding:x/"), 404, "not_found")
    internal = "urn:access:internal:curator"
    problem(client_for(world.curator).get(f"{DECISIONS}{internal}/"), 403, "role_required")
    problem(client_for(world.curator).delete(f"{DECISIONS}{internal}/"), 403, "role_required")
    assert client_for(world.curator).get(DECISIONS).json() == []


def test_an_invalid_decision_names_offenders_without_echoing_values(world):
    response = client_for(world.access_steward).post(
        DECISIONS,
        _decision(world, fields=["statement", "SECRET-FIELD"], grounding_ids=["nope"], extra=1),
        format="json",
    )
    body = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [("/extra", "unknown_field")]
    response = client_for(world.access_steward).post(
        DECISIONS,
        _decision(world, fields=["statement", "SECRET-FIELD"], grounding_ids=["nope"]),
        format="json",
    )
    body = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [
        ("/fields/1", "invalid_choice"),
        ("/grounding_ids/0", "invalid"),
    ]
    assert "SECRET-FIELD" not in response.content.decode()


def test_a_decision_in_an_unknown_dimension_or_a_duplicate_is_refused(world):
    client = client_for(world.access_steward)
    body = problem(
        client.post(DECISIONS, _decision(world, dimension="nowhere"), format="json"),
        400,
        "validation_error",
    )
    assert pointers(body) == ["/dimension"]
    assert client.post(DECISIONS, _decision(world), format="json").status_code == 201
    problem(client.post(DECISIONS, _decision(world), format="json"), 409, "decision_exists")


DIMENSION = {
    "name": "newsroom",
    "namespace": "urn:grounding:newsroom",
    "policy_package_ref": "urn:policy:newsroom@1",
    "disposition_policy_ref": "urn:policy:newsroom:retention@1",
    "disclosure_policy_ref": "urn:policy:newsroom:disclosure@1",
    "safety_policy_ref": "urn:policy:newsroom:safety@1",
    "owner_ref": "role:grounding-curator",
}


def test_an_operator_creates_a_dimension_and_becomes_its_steward(world):
    operator = factories.UserFactory(is_superuser=True)
    client = client_for(operator)
    response = client.post("/api/v1/dimensions/", DIMENSION, format="json")
    assert response.status_code == 201
    assert response.json()["name"] == "newsroom"
    assert response.json()["is_active"] is True
    assert DimensionMembership.objects.filter(
        user=operator, dimension__name="newsroom", role=Role.STEWARD
    ).exists()
    # Its staff got their internal decisions.
    assert DisclosureDecision.objects.filter(dimension__name="newsroom", internal=True).count() == 4
    names = [d["name"] for d in client.get("/api/v1/dimensions/").json()]
    assert names == sorted([world.dimension.name, "newsroom"])


def test_an_invalid_or_duplicate_dimension_is_a_validation_error_for_an_operator(world):
    client = client_for(factories.UserFactory(is_superuser=True))
    body = problem(
        client.post("/api/v1/dimensions/", {**DIMENSION, "name": "Bad Name!"}, format="json"),
        400,
        "validation_error",
    )
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [("/name", "invalid")]
    body = problem(
        client.post(
            "/api/v1/dimensions/", {**DIMENSION, "name": world.dimension.name}, format="json"
        ),
        400,
        "validation_error",
    )
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [("/name", "unique")]


PROFILE = {
    "name": "wm-mem-016",
    "version": "2.0.0",
    "support_vocabulary": ["quotation", "paraphrase"],
    "selector_profiles": ["nfc-codepoint-halfopen@1"],
    "mapping_profile_ref": "urn:grounding:mapping:web-annotation@1",
    "endpoint_role_map": {"statement": "target", "passage": "body"},
}


def test_a_steward_drafts_and_publishes_a_profile_of_the_dimension(world):
    client = client_for(world.steward)
    body = {**PROFILE, "dimension": world.dimension.name}
    created = client.post("/api/v1/profiles/", body, format="json")
    assert created.status_code == 201
    assert created.json()["ref"] == "wm-mem-016@2.0.0"
    assert created.json()["dimension"] == world.dimension.name
    assert created.json()["status"] == "draft"
    published = client.post("/api/v1/profiles/wm-mem-016@2.0.0/publish/")
    assert published.status_code == 200
    assert published.json()["status"] == "published"
    assert published.json()["published_at"] is not None
    problem(client.post("/api/v1/profiles/wm-mem-016@2.0.0/publish/"), 409, "profile_not_draft")
    listed = {
        p["ref"]: p["dimension"] for p in client_for(world.curator).get("/api/v1/profiles/").json()
    }
    assert listed == {"wm-mem-016@2.0.0": world.dimension.name, world.profile.ref: None}


def test_an_operator_drafts_and_publishes_a_shared_profile(world):
    client = client_for(factories.UserFactory(is_superuser=True))
    created = client.post("/api/v1/profiles/", PROFILE, format="json")
    assert created.status_code == 201
    assert (created.json()["ref"], created.json()["dimension"]) == ("wm-mem-016@2.0.0", None)
    assert client.post("/api/v1/profiles/wm-mem-016@2.0.0/publish/").status_code == 200
    assert Profile.objects.get(version="2.0.0").dimension is None


def test_profiles_need_a_steward_and_a_known_reference(world):
    problem(
        client_for(world.curator).post(
            "/api/v1/profiles/", {**PROFILE, "dimension": world.dimension.name}, format="json"
        ),
        403,
        "role_required",
    )
    problem(
        client_for(world.steward).post("/api/v1/profiles/nothing@9.9.9/publish/"),
        404,
        "not_found",
    )
    problem(client_for(world.outsider).get("/api/v1/profiles/"), 403, "role_required")
    assert not Profile.objects.filter(version="2.0.0").exists()


def test_an_invalid_or_duplicate_profile_is_a_validation_error(world):
    client = client_for(world.steward)
    body = problem(
        client.post(
            "/api/v1/profiles/",
            {
                **PROFILE,
                "dimension": world.dimension.name,
                "version": "two",
                "field_schemas": {"claim_scope": {"type": 12}},
            },
            format="json",
        ),
        400,
        "validation_error",
    )
    assert pointers(body) == ["/field_schemas", "/version"]
    # The Dimension's own may not take a shared profile's ref, nor one of its own.
    for version in (world.profile.version, "2.0.0"):
        duplicate = {**PROFILE, "dimension": world.dimension.name, "version": version}
        if version == "2.0.0":
            assert client.post("/api/v1/profiles/", duplicate, format="json").status_code == 201
        body = problem(client.post("/api/v1/profiles/", duplicate, format="json"), 400,
                       "validation_error")  # fmt: skip
        assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [("", "unique")]
