"""POST/GET /api/v1/change-notifications/: each kind end to end over HTTP, replay and
conflict, bad input, roles, the review queue and the display rule after a change."""

from __future__ import annotations

import pytest

from grounding.models import ChangeNotification, GroundingLink, StatementBinding
from policies.choices import Role
from policies.models import AuditEvent
from tests import factories
from tests.api.helpers import assess, client_for, if_match, pointers, problem, url

ENDPOINT = "/api/v1/change-notifications/"


def body(world, **overrides):
    values = {
        "dimension": world.dimension.name,
        "change_ref": "urn:change:cms-8841",
        "kind": "source",
        "subject_ref": world.passage.canonical_url,
        "observed_at": "2026-12-01T09:00:00Z",
        "reason": "page re-published",
    }
    values.update(overrides)
    return values


def post(world, user=None, **overrides):
    return client_for(user or world.curator).post(ENDPOINT, body(world, **overrides), format="json")


def read(world, link):
    return client_for(world.curator).get(url(link.grounding_id)).json()


@pytest.fixture
def links(world):
    """Two links on the world's passage, one on another source, one withdrawn."""
    other = factories.make_passage("Another text entirely.", dimension=world.dimension)
    on_source = [
        factories.register_link(world.curator, world.dimension, world.profile, world.passage)
        for _ in range(2)
    ]
    elsewhere = factories.register_link(world.curator, world.dimension, world.profile, other)
    withdrawn = factories.register_link(
        world.curator, world.dimension, world.profile, world.passage
    )
    from grounding import services

    services.withdraw(
        actor=world.curator,
        grounding_id=withdrawn.grounding_id,
        expected_revision=1,
        withdrawal={"reason": "retracted", "authority_ref": "urn:policy:retraction@1"},
    )
    return {"on_source": on_source, "elsewhere": elsewhere, "withdrawn": withdrawn}


def test_a_source_change_sends_every_bound_link_to_review_once(world, links):
    response = post(world)
    assert response.status_code == 201, response.content
    answer = response.json()
    expected = sorted(str(link.grounding_id) for link in links["on_source"])
    assert answer["change_ref"] == "urn:change:cms-8841"
    assert answer["affected"] == 2
    assert [entry["grounding_id"] for entry in answer["links"]] == expected
    assert {entry["revision"] for entry in answer["links"]} == {2}
    assert answer["completed"] is True
    for link in links["on_source"]:
        document = read(world, link)
        assert document["revision"] == 2
        assert document["recheck_state"] == "pending_review"
        assert document["display_state"] == "unassessed"
        stored = GroundingLink.objects.get(pk=link.grounding_id)
        assert stored.change_ref == "urn:change:cms-8841"
        assert stored.predecessor_ref == f"urn:grounding:{link.grounding_id}@1"
        assert stored.history.count() == 2
    assert GroundingLink.objects.get(pk=links["elsewhere"].grounding_id).revision == 1
    assert GroundingLink.objects.get(pk=links["withdrawn"].grounding_id).revision == 2
    events = AuditEvent.objects.filter(action="notify_change", outcome="applied")
    assert sorted(str(e.grounding_id) for e in events if e.grounding_id) == expected
    assert {e.resulting_revision for e in events if e.grounding_id} == {2}


def test_the_same_notification_again_is_200_with_the_same_answer(world, links):
    first = post(world)
    again = post(world)
    assert first.status_code == 201 and again.status_code == 200
    assert again.json() == first.json()
    assert ChangeNotification.objects.count() == 1
    for link in links["on_source"]:
        assert GroundingLink.objects.get(pk=link.grounding_id).revision == 2


def test_the_same_change_ref_with_another_body_is_a_conflict(world, links):
    assert post(world).status_code == 201
    conflict = problem(post(world, reason="another reason"), 409, "change_conflict")
    assert conflict["change_ref"] == "urn:change:cms-8841"
    assert ChangeNotification.objects.count() == 1
    refused = AuditEvent.objects.get(outcome="refused", action="notify_change")
    assert refused.code == "change_conflict"
    assert refused.dimension_ref == world.dimension.name


def test_an_answer_change_requires_rebinding_with_a_new_statement_binding(world):
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    other = factories.register_link(
        world.curator,
        world.dimension,
        world.profile,
        world.passage,
        statement={**factories.BASE_PAYLOAD["statement"], "answer_revision_ref": "urn:answer:7@1"},
    )
    response = post(world, kind="answer", subject_ref="urn:answer:42@2", change_ref="urn:c:a1")
    assert response.status_code == 201, response.content
    assert response.json()["links"] == [{"grounding_id": str(link.grounding_id), "revision": 2}]
    document = read(world, link)
    assert document["statement"]["rebind_requirement"] == "review_required"
    assert document["recheck_state"] == "pending_review"
    stored = GroundingLink.objects.get(pk=link.grounding_id)
    bindings = StatementBinding.objects.filter(link=stored).order_by("bound_in_revision")
    assert [(b.bound_in_revision, b.rebind_requirement) for b in bindings] == [
        (1, "none"),
        (2, "review_required"),
    ]
    assert bindings[1].predecessor_id == bindings[0].binding_id
    assert stored.current_statement_id == bindings[1].binding_id
    assert GroundingLink.objects.get(pk=other.grounding_id).revision == 1


def test_a_policy_change_reaches_links_and_links_whose_assessments_cite_it(world):
    by_link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    assessed = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    assert assess(world, assessed.grounding_id, 1).status_code == 201
    # Every link of the Dimension carries its safety policy.
    safety = world.dimension.safety_policy_ref
    answer = post(world, kind="policy", subject_ref=safety, change_ref="urn:c:p1").json()
    assert answer["affected"] == 2
    review = post(
        world, kind="policy", subject_ref="urn:policy:review@1", change_ref="urn:c:p2"
    ).json()
    assert review["links"] == [{"grounding_id": str(assessed.grounding_id), "revision": 4}]
    assert GroundingLink.objects.get(pk=by_link.grounding_id).revision == 2


def test_an_assessment_change_reaches_the_links_holding_that_assessment(world):
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    assert assess(world, link.grounding_id, 1, assessment_ref="urn:eval:r9").status_code == 201
    answer = post(world, kind="assessment", subject_ref="urn:eval:r9", change_ref="urn:c:e1")
    assert answer.json()["links"] == [{"grounding_id": str(link.grounding_id), "revision": 3}]


def test_an_external_source_ref_is_a_source_subject(world):
    link = factories.register_link(world.curator, world.dimension, world.profile)
    answer = post(world, subject_ref="https://example.org/bridge", change_ref="urn:c:x").json()
    assert answer["links"] == [{"grounding_id": str(link.grounding_id), "revision": 2}]


def test_after_a_change_only_an_assessment_of_the_new_revision_makes_it_visible(world):
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    assert assess(world, link.grounding_id, 1).status_code == 201
    assert read(world, link)["display_state"] == "visible"
    assert post(world).status_code == 201
    document = read(world, link)
    assert (document["revision"], document["display_state"]) == (3, "unassessed")
    assert "displayed_verdict" not in document or not document["displayed_verdict"]
    # An assessment of the old revision is refused and shows nothing.
    stale = client_for(world.reviewer).post(
        url(link.grounding_id, "assessments/"),
        factories.assessment_body(2),
        format="json",
        **if_match(3),
    )
    problem(stale, 409, "assessment_input_mismatch")
    assert read(world, link)["display_state"] == "unassessed"
    # A curator re-confirming (a revision) is no assessment either.
    client_for(world.curator).patch(
        url(link.grounding_id),
        {"owner_ref": "role:other", "revision_reason": "re-confirmed"},
        format="json",
        **if_match(3),
    )
    assert read(world, link)["display_state"] == "unassessed"
    assert assess(world, link.grounding_id, 4).status_code == 201
    document = read(world, link)
    assert (document["display_state"], document["recheck_state"]) == ("visible", "current")


def test_the_review_queue_filters_on_recheck_state_and_change_ref(world, links):
    assert post(world).status_code == 201
    client = client_for(world.curator)
    queue = client.get(
        "/api/v1/groundings/",
        {"recheck_state": "pending_review", "change_ref": "urn:change:cms-8841"},
    ).json()["results"]
    assert sorted(d["grounding_id"] for d in queue) == sorted(
        str(link.grounding_id) for link in links["on_source"]
    )
    none = client.get("/api/v1/groundings/", {"change_ref": "urn:change:other"}).json()
    assert none["results"] == []


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"kind": "weather"}, [("/kind", "enum")]),
        ({"kind": "review_due"}, [("/kind", "enum")]),
        ({"subject_ref": "not a url"}, [("/subject_ref", "subject_shape")]),
        ({"subject_ref": "https://"}, [("/subject_ref", "subject_shape")]),
        ({"kind": "answer", "subject_ref": "urn:answer 42"}, [("/subject_ref", "subject_shape")]),
        ({"subject_ref": 42}, [("/subject_ref", "required")]),
        ({"observed_at": "2026-12-01 09:00"}, [("/observed_at", "format")]),
        ({"observed_at": "2026-12-01"}, [("/observed_at", "format")]),
        ({"reason": ""}, [("/reason", "required")]),
        ({"change_ref": None}, [("/change_ref", "required")]),
        ({"extra": 1}, [("/extra", "unknown_field")]),
        (
            {"kind": "x", "observed_at": "yesterday"},
            [("/kind", "enum"), ("/observed_at", "format")],
        ),
    ],
)
def test_bad_input_is_refused_with_pointers_nothing_written_and_audited(
    world, links, overrides, expected
):
    refused = problem(post(world, **overrides), 400, "validation_error")
    assert sorted((o["pointer"], o["code"]) for o in refused["offenders"]) == expected
    assert ChangeNotification.objects.count() == 0
    assert GroundingLink.objects.filter(revision__gt=1, record_state="candidate").count() == 0
    event = AuditEvent.objects.get(outcome="refused", action="notify_change")
    assert (event.code, event.dimension_ref) == ("validation_error", world.dimension.name)


def test_a_dimension_without_a_role_is_not_found_and_a_reviewer_is_refused(world, links):
    stranger_dimension = factories.make_dimension()
    stranger = factories.user_with_roles(stranger_dimension, Role.CURATOR)
    problem(post(world, user=stranger), 404, "not_found")
    problem(post(world, dimension="no-such-dimension"), 404, "not_found")
    problem(post(world, user=world.reviewer), 403, "role_required")
    assert post(world, user=world.steward).status_code == 201
    assert AuditEvent.objects.filter(outcome="refused", action="notify_change").count() == 3


def test_a_body_that_is_not_an_object_is_a_validation_error(world):
    response = client_for(world.curator).post(ENDPOINT, [1, 2], format="json")
    assert pointers(problem(response, 400, "validation_error")) == [""]


def test_notifications_are_listed_filtered_and_read_with_their_links(world, links):
    first = post(world).json()
    post(world, kind="answer", subject_ref="urn:answer:42@2", change_ref="urn:c:a",
         observed_at="2026-12-02T09:00:00Z")  # fmt: skip
    client = client_for(world.curator)
    listed = client.get(ENDPOINT).json()["results"]
    assert [n["change_ref"] for n in listed] == ["urn:c:a", "urn:change:cms-8841"]
    assert "links" not in listed[0]
    assert [n["change_ref"] for n in client.get(ENDPOINT, {"kind": "source"}).json()["results"]] \
        == ["urn:change:cms-8841"]  # fmt: skip
    by_subject = client.get(ENDPOINT, {"subject_ref": "urn:answer:42@2"}).json()["results"]
    assert [n["change_ref"] for n in by_subject] == ["urn:c:a"]
    in_range = client.get(
        ENDPOINT,
        {"observed_after": "2026-12-01T12:00:00Z", "observed_before": "2026-12-03T00:00:00Z"},
    ).json()["results"]
    assert [n["change_ref"] for n in in_range] == ["urn:c:a"]
    bad = problem(client.get(ENDPOINT, {"observed_after": "noon"}), 400, "validation_error")
    assert pointers(bad) == ["/query/observed_after"]
    detail = client.get(f"{ENDPOINT}{first['notification_id']}/")
    assert detail.status_code == 200
    assert detail.json() == first
    problem(client_for(world.reviewer).get(f"{ENDPOINT}{first['notification_id']}/"), 403,
            "role_required")  # fmt: skip
    problem(client_for(world.outsider).get(f"{ENDPOINT}{first['notification_id']}/"), 404,
            "not_found")  # fmt: skip
    assert client_for(world.outsider).get(ENDPOINT).json()["results"] == []


def test_unauthenticated_is_401(world):
    response = client_for(None).post(ENDPOINT, body(world), format="json")
    assert response.status_code == 401
