"""GET /api/v1/audit-events/: read-only, stewards only, filterable."""

import pytest

from common.kernel.refusals import Refusal
from grounding import services
from tests import factories
from tests.api.helpers import client_for, problem

URL = "/api/v1/audit-events/"


def _life(world):
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    # A refused call: its audit event is what this set-up wants.
    with pytest.raises(Refusal):
        services.revise(
            actor=world.curator,
            grounding_id=link.pk,
            expected_revision=9,
            changes={"owner_ref": "x", "revision_reason": "stale"},
        )
    factories.assess(world.reviewer, link)
    return link


def test_stewards_read_their_dimensions_events_newest_first(world):
    link = _life(world)
    other = factories.make_dimension()
    from policies.choices import Role

    stranger = factories.user_with_roles(other, Role.CURATOR)
    factories.register_link(stranger, other, world.profile)
    response = client_for(world.steward).get(URL, {"link": str(link.pk)})
    assert response.status_code == 200
    events = response.json()["results"]
    assert [(e["action"], e["outcome"], e["code"]) for e in events] == [
        ("bind_assessment", "applied", ""),
        ("revise", "refused", "revision_mismatch"),
        ("register", "applied", ""),
    ]
    assert {e["dimension"] for e in events} == {world.dimension.name}
    assert events[1]["expected_revision"] == 9
    everything = client_for(world.access_steward).get(URL).json()["results"]
    assert other.name not in {e["dimension"] for e in everything}


def test_audit_events_filter_by_actor_action_and_outcome(world):
    _life(world)
    client = client_for(world.steward)
    refused = client.get(URL, {"outcome": "refused"}).json()["results"]
    assert [(e["action"], e["code"]) for e in refused] == [("revise", "revision_mismatch")]
    by_reviewer = client.get(URL, {"actor": world.reviewer.username}).json()["results"]
    assert [e["action"] for e in by_reviewer] == ["bind_assessment"]
    assert by_reviewer[0]["actor_ref"] == f"user:{world.reviewer.username}"
    registers = client.get(URL, {"action": "register"}).json()["results"]
    assert len(registers) == 1


def test_audit_events_are_refused_to_curators_and_anonymous(world):
    problem(client_for(world.curator).get(URL), 403, "role_required")
    problem(client_for(None).get(URL), 401, "not_authenticated")


def test_audit_events_are_read_only(world):
    response = client_for(world.steward).post(URL, {}, format="json")
    problem(response, 405, "method_not_allowed")


def test_audit_events_page_by_page_size_and_walk_every_event_once(world):
    for _ in range(3):
        _life(world)
    client = client_for(world.steward)
    everything = client.get(URL, {"page_size": 200}).json()
    assert everything["next"] is None
    expected = [e["event_id"] for e in everything["results"]]
    # The world's set-up events, then three lives of three events each.
    total = len(expected)
    assert total >= 9

    seen, page, sizes = [], client.get(URL, {"page_size": 4}).json(), []
    while True:
        sizes.append(len(page["results"]))
        seen += [e["event_id"] for e in page["results"]]
        if page["next"] is None:
            break
        page = client.get(page["next"]).json()
    assert sizes == [4] * (total // 4) + ([total % 4] if total % 4 else [])
    assert seen == expected
    # Larger than the maximum: capped at 200, not refused.
    assert client.get(URL, {"page_size": 5000}).status_code == 200
