"""GET /api/v1/groundings/{id}/ and the list: disclosure, filters, cursor, queries."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from grounding import services
from policies import governance
from policies.choices import Role
from tests import factories
from tests.api.helpers import (
    client_for,
    problem,
    register,
    restrict_curators_to,
    url,
)

LIST = "/api/v1/groundings/"


def test_read_returns_the_link_with_a_strong_etag_and_vary(world, link):
    response = client_for(world.reviewer).get(url(link.grounding_id))
    assert response.status_code == 200
    assert response["ETag"] == '"1"'
    assert "Authorization" in response["Vary"] and "Cookie" in response["Vary"]
    body = response.json()
    assert body["grounding_id"] == str(link.grounding_id)
    assert body["revision"] == 1
    assert body["passage"]["resolution_state"] == "unattempted"
    assert body["withheld"] == []


def test_read_with_a_matching_if_none_match_is_304(world, link):
    client = client_for(world.curator)
    assert client.get(url(link.grounding_id), HTTP_IF_NONE_MATCH='"1"').status_code == 304
    assert client.get(url(link.grounding_id), HTTP_IF_NONE_MATCH='W/"1"').status_code == 304
    stale = client.get(url(link.grounding_id), HTTP_IF_NONE_MATCH='"7", "8"')
    assert stale.status_code == 200
    assert stale["ETag"] == '"1"'


def test_read_by_a_user_without_a_role_in_the_dimension_is_not_found(world, link):
    # Existence is not disclosed: the same answer as for an id that does not exist.
    body = problem(client_for(world.outsider).get(url(link.grounding_id)), 404, "not_found")
    unknown = problem(
        client_for(world.outsider).get(url("01900000-0000-7000-8000-000000000000")),
        404,
        "not_found",
    )
    assert body["title"] == unknown["title"]


def test_read_without_a_covering_decision_is_disclosure_not_decided(world, link):
    # Projection agents have no internal read decision: they export under supplied ones.
    body = problem(
        client_for(world.projection_agent).get(url(link.grounding_id)),
        403,
        "disclosure_not_decided",
    )
    assert "opened in 1932" not in str(body)


def test_read_withholds_uncovered_fields_and_names_them(world, link):
    restrict_curators_to(world, ["support"])
    body = client_for(world.curator).get(url(link.grounding_id)).json()
    assert "statement" not in body
    assert body["support"]["support_kind"] == "quotation"
    assert "excerpt" not in body["passage"] and "title" not in body["passage"]
    assert "source_selector" not in body["anchor"]
    assert body["withheld"] == [
        "anchor.selector",
        "assessments.reviewer",
        "assessments.verdict",
        "passage.excerpt",
        "passage.locator",
        "passage.title",
        "statement",
    ]
    assert "opened in 1932" not in str(body)


def test_read_of_an_unknown_or_malformed_id_is_404_problem(world):
    client = client_for(world.curator)
    problem(client.get(url("01900000-0000-7000-8000-000000000000")), 404, "not_found")
    problem(client.get(url("not-a-uuid")), 404, "not_found")


def _ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [item["grounding_id"] for item in response.json()["results"]]


def test_list_shows_only_links_the_reader_has_a_decision_for(world):
    mine = register(world)["grounding_id"]
    other_dimension = factories.make_dimension()
    stranger = factories.user_with_roles(other_dimension, Role.CURATOR)
    factories.register_link(stranger, other_dimension, world.profile)
    assert _ids(client_for(world.curator).get(LIST)) == [mine]
    assert _ids(client_for(world.outsider).get(LIST)) == []
    assert _ids(client_for(world.projection_agent).get(LIST)) == []


def test_list_honours_decisions_limited_to_listed_links(world):
    first = register(world)["grounding_id"]
    register(world)
    restrict_curators_to(world, ["statement", "support"], grounding_ids=[first])
    assert _ids(client_for(world.curator).get(LIST)) == [first]


def test_list_filters_on_every_documented_field(world):
    client = client_for(world.curator)
    base = register(world)["grounding_id"]
    other_statement = register(
        world,
        statement={
            **factories.BASE_PAYLOAD["statement"],
            "statement_ref": "urn:answer:7#s1",
            "answer_revision_ref": "urn:answer:7@1",
        },
    )["grounding_id"]
    paraphrase = register(
        world, support={"support_kind": "paraphrase", "support_scope": {"covers": "year"}}
    )["grounding_id"]
    other_passage = factories.make_passage("Another text about 1932.", dimension=world.dimension)
    elsewhere = register(world, passage={"passage_id": str(other_passage.passage_id)})[
        "grounding_id"
    ]
    services.revise(
        actor=world.curator,
        grounding_id=paraphrase,
        expected_revision=1,
        changes={"record_state": "admitted", "revision_reason": "admitted"},
    )
    services.revise(
        actor=world.curator,
        grounding_id=elsewhere,
        expected_revision=1,
        changes={"recheck_state": "pending_review", "revision_reason": "recheck"},
    )
    second = factories.make_dimension()
    governance.grant_role(actor=None, dimension=second, user=world.curator, role=Role.CURATOR)
    in_second = factories.register_link(world.curator, second, world.profile)

    everything = {base, other_statement, paraphrase, elsewhere, str(in_second.grounding_id)}
    assert set(_ids(client.get(LIST))) == everything
    assert _ids(client.get(LIST, {"dimension": second.name})) == [str(in_second.grounding_id)]
    assert _ids(client.get(LIST, {"record_state": "admitted"})) == [paraphrase]
    assert _ids(client.get(LIST, {"recheck_state": "pending_review"})) == [elsewhere]
    assert _ids(client.get(LIST, {"statement_ref": "urn:answer:7#s1"})) == [other_statement]
    assert _ids(client.get(LIST, {"answer_revision_ref": "urn:answer:7@1"})) == [other_statement]
    assert _ids(client.get(LIST, {"passage_id": str(other_passage.passage_id)})) == [elsewhere]
    assert _ids(client.get(LIST, {"support_kind": "paraphrase"})) == [paraphrase]
    assert set(_ids(client.get(LIST, {"support_kind": "quotation"}))) == everything - {paraphrase}


def test_list_filter_on_a_withheld_group_does_not_select_on_it(world):
    register(world)
    restrict_curators_to(world, ["support"])
    client = client_for(world.curator)
    assert len(_ids(client.get(LIST))) == 1
    assert _ids(client.get(LIST, {"statement_ref": "urn:answer:42#s3"})) == []
    assert len(_ids(client.get(LIST, {"support_kind": "quotation"}))) == 1


def test_list_rejects_an_unknown_filter_value_without_echoing_it(world):
    response = client_for(world.curator).get(LIST, {"record_state": "SECRET-VALUE"})
    body = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [
        ("/record_state", "invalid_choice")
    ]
    assert "SECRET-VALUE" not in response.content.decode()


def test_list_is_cursor_paginated_newest_first_without_gaps_or_repeats(world):
    created = [register(world)["grounding_id"] for _ in range(5)]
    client = client_for(world.curator)
    seen: list[str] = []
    page = client.get(LIST, {"page_size": 2}).json()
    assert page["previous"] is None
    pages = 1
    while True:
        seen += [item["grounding_id"] for item in page["results"]]
        if page["next"] is None:
            break
        page = client.get(page["next"]).json()
        pages += 1
    assert pages == 3
    assert seen == sorted(created, reverse=True)


def test_list_default_page_is_50(world):
    payloads = [factories.link_payload(world.dimension, world.profile) for _ in range(51)]
    services.register_many(actor=world.curator, items=payloads)
    page = client_for(world.curator).get(LIST).json()
    assert len(page["results"]) == 50
    assert page["next"] is not None


def _populate(world, count: int) -> None:
    links = services.register_many(
        actor=world.curator,
        items=[
            factories.link_payload(world.dimension, world.profile, world.passage)
            for _ in range(count)
        ],
    )
    members = []
    for link in links:
        services.bind_assessment(
            actor=world.reviewer,
            grounding_id=link.grounding_id,
            expected_revision=1,
            assessment=factories.assessment_body(1),
        )
        members.append({"grounding_id": str(link.grounding_id), "membership_role": "premise"})
    services.create_evidence_set(
        actor=world.curator,
        values={
            "evidence_set_ref": f"urn:set:{count}",
            "dimension": world.dimension.name,
            "members": members,
        },
    )


def _list_queries(world) -> tuple[int, int]:
    client = client_for(world.curator)
    with CaptureQueriesContext(connection) as captured:
        response = client.get(LIST)
    assert response.status_code == 200
    return len(captured), len(response.json()["results"])


@pytest.mark.django_db
def test_list_makes_the_same_number_of_queries_for_3_and_30_links(
    world, django_assert_max_num_queries
):
    _populate(world, 3)
    small, shown = _list_queries(world)
    assert shown == 3
    _populate(world, 27)
    client = client_for(world.curator)
    with django_assert_max_num_queries(small):
        response = client.get(LIST)
    results = response.json()["results"]
    assert len(results) == 30
    assert all(item["assessments"][0]["verdict"] == "supporting" for item in results)
    assert all(item["evidence_sets"][0]["membership_role"] == "premise" for item in results)
    assert _list_queries(world) == (small, 30)


def test_the_evidence_passages_collection_is_mounted_under_v1(world):
    response = client_for(world.curator).get("/api/v1/evidence/passages/")
    assert response.status_code == 200
    ids = [p["passage_id"] for p in response.json()["results"]]
    assert str(world.passage.passage_id) in ids
    root = client_for(world.curator).get("/api/v1/").json()
    assert root["collections"]["groundings"] == "http://testserver/api/v1/groundings/"
