"""Evidence sets: create, read with missing members and completeness, members."""

from tests import factories
from tests.api.helpers import client_for, if_match, pointers, problem

SETS = "/api/v1/evidence-sets/"


def _links(world, n):
    return [
        factories.register_link(world.curator, world.dimension, world.profile, world.passage)
        for _ in range(n)
    ]


def _create(world, links, **extra):
    body = {
        "evidence_set_ref": "urn:set:bridge/1",
        "dimension": world.dimension.name,
        "members": [
            {"grounding_id": str(links[0].grounding_id), "membership_role": "premise"},
            {"grounding_id": str(links[1].grounding_id), "membership_role": "counterevidence"},
        ],
        "combination_rule_ref": "urn:rule:all-premises",
        "dependence_ref": "urn:dependence:same-outlet",
        **extra,
    }
    return client_for(world.curator).post(SETS, body, format="json")


def test_creating_a_set_answers_201_with_location_etag_and_members(world):
    links = _links(world, 2)
    response = _create(world, links)
    assert response.status_code == 201
    assert response["ETag"] == '"1"'
    # Set refs are unique per Dimension: the Location names the set's Dimension too.
    assert response["Location"] == (
        f"http://testserver/api/v1/evidence-sets/urn:set:bridge/1/?dimension={world.dimension.name}"
    )
    body = response.json()
    assert body["revision"] == 1
    assert body["members"] == [
        {"grounding_id": str(links[0].grounding_id), "membership_role": "premise"},
        {"grounding_id": str(links[1].grounding_id), "membership_role": "counterevidence"},
    ]
    assert body["missing_members"] == []
    assert body["complete"] is True
    assert body["dependence_ref"] == "urn:dependence:same-outlet"


def test_a_set_with_a_declared_missing_or_withdrawn_premise_is_incomplete(world):
    links = _links(world, 2)
    _create(world, links, declared_missing_members=["urn:premise:census-1930"])
    # Joining the set moved the member to revision 2.
    response = client_for(world.curator).post(
        f"/api/v1/groundings/{links[0].grounding_id}/withdrawal/",
        {"reason": "retracted", "authority_ref": "urn:policy:r"},
        format="json",
        **if_match(2),
    )
    assert response.status_code == 201, response.json()
    body = client_for(world.reviewer).get(f"{SETS}urn:set:bridge/1/").json()
    assert body["complete"] is False
    assert body["missing_members"] == [
        "urn:premise:census-1930",
        f"urn:grounding:{links[0].grounding_id}",
    ]


def test_members_are_added_and_removed_under_if_match(world):
    links = _links(world, 3)
    _create(world, links)
    client = client_for(world.curator)
    added = client.post(
        f"{SETS}urn:set:bridge/1/members/",
        {"grounding_id": str(links[2].grounding_id), "membership_role": "context"},
        format="json",
        **if_match(1),
    )
    assert added.status_code == 201
    assert added["ETag"] == '"2"'
    assert len(added.json()["members"]) == 3
    removed = client.delete(
        f"{SETS}urn:set:bridge/1/members/{links[1].grounding_id}/", **if_match(2)
    )
    assert removed.status_code == 200
    assert removed["ETag"] == '"3"'
    assert [m["grounding_id"] for m in removed.json()["members"]] == [
        str(links[0].grounding_id),
        str(links[2].grounding_id),
    ]
    problem(
        client.delete(f"{SETS}urn:set:bridge/1/members/{links[1].grounding_id}/", **if_match(3)),
        409,
        "not_a_member",
    )


def test_an_invalid_member_is_reported_at_its_own_pointer(world):
    links = _links(world, 2)
    _create(world, links)
    response = client_for(world.curator).post(
        f"{SETS}urn:set:bridge/1/members/",
        {"grounding_id": "01900000-0000-7000-8000-000000000000", "membership_role": "hero"},
        format="json",
        **if_match(1),
    )
    body = problem(response, 400, "validation_error")
    assert pointers(body) == ["/grounding_id", "/membership_role"]


def test_set_refusals(world):
    links = _links(world, 2)
    problem(client_for(world.reviewer).post(SETS, {
        "evidence_set_ref": "urn:set:x", "dimension": world.dimension.name,
    }, format="json"), 403, "role_required")  # fmt: skip
    assert _create(world, links).status_code == 201
    problem(_create(world, links), 409, "evidence_set_exists")
    problem(client_for(world.curator).get(f"{SETS}urn:set:none/"), 404, "not_found")
    problem(client_for(world.outsider).get(f"{SETS}urn:set:bridge/1/"), 404, "not_found")
