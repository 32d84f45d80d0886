"""Refs are unique per Dimension (API.md "Tenancy"): the same master_ref,
evidence_set_ref, assessment_ref or change_ref in two Dimensions is two resources,
and no answer in one Dimension mentions the other."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.db import IntegrityError, transaction

from grounding import services
from grounding.models import EvidenceSet, GroundingLink
from policies import governance
from policies.choices import Role
from tests import factories
from tests.api.helpers import client_for, if_match, problem, register_body

SETS = "/api/v1/evidence-sets/"


@dataclass
class Two:
    a: object
    b: object
    profile: object
    curator_a: object
    curator_b: object
    reviewer_a: object
    reviewer_b: object
    both: object  # curator and reviewer in A and in B
    passage_a: object
    passage_b: object


@pytest.fixture
def two(db) -> Two:
    a, b = factories.make_dimension(), factories.make_dimension()
    both = factories.user_with_roles(a, Role.CURATOR, Role.REVIEWER)
    for role in (Role.CURATOR, Role.REVIEWER):
        governance.grant_role(actor=None, dimension=b, user=both, role=role)
    return Two(
        a=a,
        b=b,
        profile=factories.make_profile(),
        curator_a=factories.user_with_roles(a, Role.CURATOR),
        curator_b=factories.user_with_roles(b, Role.CURATOR),
        reviewer_a=factories.user_with_roles(a, Role.REVIEWER),
        reviewer_b=factories.user_with_roles(b, Role.REVIEWER),
        both=both,
        passage_a=factories.make_passage(dimension=a),
        passage_b=factories.make_passage(dimension=b),
    )


@dataclass
class _World:
    """What tests.api.helpers.register_body needs of a world, for one Dimension."""

    dimension: object
    profile: object
    passage: object


def _body(two: Two, dimension, **overrides) -> dict:
    passage = two.passage_a if dimension == two.a else two.passage_b
    return register_body(_World(dimension, two.profile, passage), **overrides)


# -- master_ref


def test_the_same_master_ref_registers_once_in_each_dimension(two):
    first = client_for(two.curator_b).post(
        "/api/v1/groundings/", _body(two, two.b, master_ref="urn:m:shared"), format="json"
    )
    assert first.status_code == 201, first.content
    # B's link is no conflict for A, and A's answer says nothing of it.
    second = client_for(two.curator_a).post(
        "/api/v1/groundings/", _body(two, two.a, master_ref="urn:m:shared"), format="json"
    )
    assert second.status_code == 201, second.content
    assert second.json()["dimension"] == two.a.name
    assert first.json()["grounding_id"] not in second.content.decode()
    refs = GroundingLink.objects.filter(master_ref="urn:m:shared")
    assert sorted(refs.values_list("dimension__name", flat=True)) == sorted(
        [two.a.name, two.b.name]
    )


def test_a_master_ref_taken_in_the_same_dimension_is_409_unique(two):
    factories.register_link(
        two.curator_b, two.b, two.profile, two.passage_b, master_ref="urn:m:taken"
    )
    factories.register_link(
        two.curator_a, two.a, two.profile, two.passage_a, master_ref="urn:m:taken"
    )
    again = client_for(two.curator_a).post(
        "/api/v1/groundings/", _body(two, two.a, master_ref="urn:m:taken"), format="json"
    )
    body = problem(again, 409, "master_ref_conflict")
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [("/master_ref", "unique")]


def test_one_bulk_may_give_a_master_ref_once_per_dimension(two):
    client = client_for(two.both)
    across = {
        "items": [
            _body(two, two.a, master_ref="urn:m:bulk"),
            _body(two, two.b, master_ref="urn:m:bulk"),
        ]
    }
    created = client.post("/api/v1/groundings/bulk/", across, format="json")
    assert created.status_code == 201, created.content
    assert [i["dimension"] for i in created.json()["items"]] == [two.a.name, two.b.name]
    within = {
        "items": [
            _body(two, two.b, master_ref="urn:m:bulk2"),
            _body(two, two.b, master_ref="urn:m:bulk2"),
        ]
    }
    body = problem(
        client.post("/api/v1/groundings/bulk/", within, format="json"), 409, "master_ref_conflict"
    )
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [
        ("/items/1/master_ref", "duplicate")
    ]


def test_the_database_holds_master_ref_unique_per_dimension_only(two):
    for curator, dimension, passage in (
        (two.curator_a, two.a, two.passage_a),
        (two.curator_b, two.b, two.passage_b),
    ):
        factories.register_link(curator, dimension, two.profile, passage, master_ref="urn:m:db")
    # Past the service's own check, the database refuses a second one in A.
    other_a = factories.register_link(two.curator_a, two.a, two.profile, two.passage_a)
    other_a.master_ref = "urn:m:db"
    with pytest.raises(IntegrityError), transaction.atomic():
        other_a.save()
    # Links without a master_ref are not constrained at all.
    factories.register_link(two.curator_a, two.a, two.profile, two.passage_a)
    assert GroundingLink.objects.filter(dimension=two.a, master_ref__isnull=True).count() == 2


# -- evidence_set_ref


def _create_set(user, dimension, links, ref="urn:set:shared/1"):
    return client_for(user).post(
        SETS,
        {
            "evidence_set_ref": ref,
            "dimension": dimension.name,
            "members": [
                {"grounding_id": str(link.pk), "membership_role": "premise"} for link in links
            ],
        },
        format="json",
    )


def test_the_same_set_ref_is_one_set_in_each_dimension(two):
    link_a = factories.register_link(two.curator_a, two.a, two.profile, two.passage_a)
    link_b = factories.register_link(two.curator_b, two.b, two.profile, two.passage_b)
    created_b = _create_set(two.curator_b, two.b, [link_b])
    assert created_b.status_code == 201, created_b.content
    created_a = _create_set(two.curator_a, two.a, [link_a])
    assert created_a.status_code == 201, created_a.content
    assert created_a["Location"] == (
        f"http://testserver{SETS}urn:set:shared/1/?dimension={two.a.name}"
    )
    # Each curator reads its own Dimension's set; the other's is never mentioned.
    read_a = client_for(two.curator_a).get(f"{SETS}urn:set:shared/1/")
    read_b = client_for(two.curator_b).get(f"{SETS}urn:set:shared/1/")
    assert read_a.json()["dimension"] == two.a.name
    assert [m["grounding_id"] for m in read_a.json()["members"]] == [str(link_a.pk)]
    assert read_b.json()["dimension"] == two.b.name
    assert str(link_b.pk) not in read_a.content.decode()
    assert str(link_a.pk) not in read_b.content.decode()
    assert EvidenceSet.objects.filter(evidence_set_ref="urn:set:shared/1").count() == 2


def test_a_set_ref_taken_in_the_same_dimension_is_409_and_another_dimensions_is_not(two):
    assert _create_set(two.curator_b, two.b, []).status_code == 201
    assert _create_set(two.curator_a, two.a, []).status_code == 201
    problem(_create_set(two.curator_a, two.a, []), 409, "evidence_set_exists")


def test_a_set_ref_in_several_of_the_callers_dimensions_is_chosen_by_dimension(two):
    link_a = factories.register_link(two.both, two.a, two.profile, two.passage_a)
    link_b = factories.register_link(two.both, two.b, two.profile, two.passage_b)
    assert _create_set(two.both, two.a, []).status_code == 201
    assert _create_set(two.both, two.b, []).status_code == 201
    client = client_for(two.both)
    problem(client.get(f"{SETS}urn:set:shared/1/"), 400, "dimension_required")
    chosen = client.get(f"{SETS}urn:set:shared/1/", {"dimension": two.b.name})
    assert chosen.status_code == 200
    assert chosen.json()["dimension"] == two.b.name
    # A change names its Dimension the same way; without it nothing is changed.
    member = {"grounding_id": str(link_a.pk), "membership_role": "premise"}
    members = f"{SETS}urn:set:shared/1/members/"
    problem(client.post(members, member, format="json", **if_match(1)), 400, "dimension_required")
    added = client.post(f"{members}?dimension={two.a.name}", member, format="json", **if_match(1))
    assert added.status_code == 201, added.content
    assert added.json()["dimension"] == two.a.name
    assert [m["grounding_id"] for m in added.json()["members"]] == [str(link_a.pk)]
    removed = client.delete(
        f"{members}{link_a.pk}/?dimension={two.a.name}", format="json", **if_match(2)
    )
    assert removed.status_code == 200, removed.content
    assert removed.json()["members"] == []
    # B's set was never touched; its member list names nothing of A's.
    other = client.get(f"{SETS}urn:set:shared/1/", {"dimension": two.b.name}).json()
    assert (other["revision"], other["members"]) == (1, [])
    assert str(link_b.pk) not in added.content.decode()


def test_a_set_of_a_dimension_of_no_role_is_not_found_even_by_name(two):
    assert _create_set(two.curator_b, two.b, []).status_code == 201
    client = client_for(two.curator_a)
    unknown = client.get(f"{SETS}urn:set:nowhere/", {"dimension": "no-such-dimension"})
    for response in (
        client.get(f"{SETS}urn:set:shared/1/"),
        client.get(f"{SETS}urn:set:shared/1/", {"dimension": two.b.name}),
    ):
        body = problem(response, 404, "not_found")
        assert body == problem(unknown, 404, "not_found")


def test_removing_another_dimensions_link_from_a_set_reads_nothing_of_it(two):
    link_b = factories.register_link(two.curator_b, two.b, two.profile, two.passage_b)
    services.withdraw(
        actor=two.curator_b,
        grounding_id=link_b.pk,
        expected_revision=1,
        withdrawal={"reason": "retracted", "authority_ref": "urn:policy:r"},
    )
    assert _create_set(two.curator_a, two.a, []).status_code == 201
    client = client_for(two.curator_a)
    gone = client.delete(f"{SETS}urn:set:shared/1/members/{link_b.pk}/", **if_match(1))
    # Not link_withdrawn: the link is not one of the set's Dimension's.
    problem(gone, 409, "not_a_member")


def test_the_database_holds_set_refs_unique_per_dimension_only(two):
    for dimension in (two.a, two.b):
        EvidenceSet.objects.create(
            evidence_set_ref="urn:set:db", dimension=dimension, created_by=two.both
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        EvidenceSet.objects.create(
            evidence_set_ref="urn:set:db", dimension=two.a, created_by=two.both
        )


# -- assessment_ref and change_ref


def test_the_same_assessment_ref_in_two_dimensions_is_two_assessments(two):
    link_a = factories.register_link(two.curator_a, two.a, two.profile, two.passage_a)
    link_b = factories.register_link(two.curator_b, two.b, two.profile, two.passage_b)
    answers = [
        client_for(reviewer).post(
            f"/api/v1/groundings/{link.pk}/assessments/",
            factories.assessment_body(1, assessment_ref="urn:eval:shared/1"),
            format="json",
            **if_match(1),
        )
        for reviewer, link in ((two.reviewer_b, link_b), (two.reviewer_a, link_a))
    ]
    assert [a.status_code for a in answers] == [201, 201]
    assert str(link_b.pk) not in answers[1].content.decode()
    # A change of that assessment in A sends A's link to review, and only A's.
    change = client_for(two.curator_a).post(
        "/api/v1/change-notifications/",
        {
            "dimension": two.a.name,
            "change_ref": "urn:change:shared/1",
            "kind": "assessment",
            "subject_ref": "urn:eval:shared/1",
            "observed_at": "2026-12-01T09:00:00Z",
            "reason": "the evaluation run was withdrawn",
        },
        format="json",
    )
    assert change.status_code == 201, change.content
    assert [link["grounding_id"] for link in change.json()["links"]] == [str(link_a.pk)]
    assert GroundingLink.objects.get(pk=link_b.pk).recheck_state == "current"


def test_the_same_change_ref_in_two_dimensions_is_two_notifications(two):
    link_a = factories.register_link(two.curator_a, two.a, two.profile, two.passage_a)
    link_b = factories.register_link(two.curator_b, two.b, two.profile, two.passage_b)
    answers = []
    for curator, dimension, passage, reason in (
        (two.curator_b, two.b, two.passage_b, "b re-published"),
        (two.curator_a, two.a, two.passage_a, "a re-published"),
    ):
        answers.append(
            client_for(curator).post(
                "/api/v1/change-notifications/",
                {
                    "dimension": dimension.name,
                    "change_ref": "urn:change:shared/2",
                    "kind": "source",
                    "subject_ref": passage.canonical_url,
                    "observed_at": "2026-12-01T09:00:00Z",
                    "reason": reason,
                },
                format="json",
            )
        )
    # Another body under the same change_ref is a conflict only within one Dimension.
    assert [a.status_code for a in answers] == [201, 201]
    assert [[x["grounding_id"] for x in a.json()["links"]] for a in answers] == [
        [str(link_b.pk)],
        [str(link_a.pk)],
    ]
    assert str(link_b.pk) not in answers[1].content.decode()
