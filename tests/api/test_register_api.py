"""POST /api/v1/groundings/ and /groundings/bulk/."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from grounding.models import GroundingLink
from policies.models import AuditEvent
from tests import factories
from tests.api.helpers import client_for, pointers, problem, register_body


def test_register_answers_201_with_location_etag_and_the_link_as_read(world):
    response = client_for(world.curator).post(
        "/api/v1/groundings/", register_body(world), format="json"
    )
    assert response.status_code == 201
    body = response.json()
    assert response["ETag"] == '"1"'
    assert response["Location"] == f"http://testserver/api/v1/groundings/{body['grounding_id']}/"
    assert body["revision"] == 1
    assert body["record_state"] == "candidate"
    assert body["recheck_state"] == "current"
    assert body["display_state"] == "unassessed"
    assert "displayed_verdict" not in body
    assert body["dimension"] == world.dimension.name
    assert body["profile"] == world.profile.ref
    assert body["statement"]["statement_ref"] == "urn:answer:42#s3"
    assert body["passage"]["passage_id"] == str(world.passage.passage_id)
    assert body["passage"]["resolution_state"] == "unattempted"
    assert body["anchor"]["anchor_result"] is None
    assert body["anchor"]["source_selector"]["exact"] == "opened in 1932"
    assert body["support"]["support_kind"] == "quotation"
    assert body["assessments"] == []
    assert body["evidence_sets"] == []
    assert body["time"]["asserted_at"] == "2026-11-30T12:00:00Z"
    assert body["time"]["observed_at"].endswith("Z")
    assert body["withdrawal"] is None
    assert body["withheld"] == []
    assert GroundingLink.objects.get(pk=body["grounding_id"]).revision == 1


def test_register_with_an_external_passage_binding(world):
    response = client_for(world.curator).post(
        "/api/v1/groundings/", register_body(world, external=True), format="json"
    )
    assert response.status_code == 201
    passage = response.json()["passage"]
    assert passage["passage_id"] is None
    assert passage["passage_ref"].startswith("urn:ext:passage:")
    assert passage["source_revision_binding"]["revision"] == "etag:abc"


@pytest.mark.parametrize("external", [False, True])
def test_the_register_answer_is_the_link_as_a_later_read_returns_it(world, external):
    # The answer is rendered from the link just written, not read back: it must be
    # what GET returns, with no query to re-read the link.
    client = client_for(world.curator)
    with CaptureQueriesContext(connection) as captured:
        created = client.post(
            "/api/v1/groundings/", register_body(world, external=external), format="json"
        )
    assert created.status_code == 201
    read = client.get(f"/api/v1/groundings/{created.json()['grounding_id']}/")
    assert created.json() == read.json()
    assert created["ETag"] == read["ETag"] == '"1"'
    rereads = [
        q["sql"]
        for q in captured.captured_queries
        if q["sql"].startswith('SELECT "grounding_groundinglink"."grounding_id"')
    ]
    assert rereads == []


def test_the_bulk_answer_is_each_link_as_a_later_read_returns_it(world):
    client = client_for(world.curator)
    body = {"items": [register_body(world), register_body(world, external=True)]}
    with CaptureQueriesContext(connection) as captured:
        created = client.post("/api/v1/groundings/bulk/", body, format="json")
    assert created.status_code == 201
    items = created.json()["items"]
    assert [client.get(f"/api/v1/groundings/{i['grounding_id']}/").json() for i in items] == items
    assert not [
        q["sql"]
        for q in captured.captured_queries
        if q["sql"].startswith('SELECT "grounding_groundinglink"."grounding_id"')
    ]


def test_register_reports_every_offender_with_a_json_pointer(world):
    payload = register_body(world)
    del payload["statement"]["statement_ref"]
    payload["support"]["support_kind"] = "vibes"
    payload["passage"] = {"passage_id": "01900000-0000-7000-8000-000000000000"}
    payload["surprise"] = 1
    response = client_for(world.curator).post("/api/v1/groundings/", payload, format="json")
    body = problem(response, 400, "validation_error")
    assert pointers(body) == [
        "/passage/passage_id",
        "/statement/statement_ref",
        "/support/support_kind",
        "/surprise",
    ]
    assert GroundingLink.objects.count() == 0


def test_register_needs_the_curator_role(world):
    response = client_for(world.reviewer).post(
        "/api/v1/groundings/", register_body(world), format="json"
    )
    problem(response, 403, "role_required")
    assert GroundingLink.objects.count() == 0


def test_register_in_an_unknown_dimension_is_a_validation_error(world):
    response = client_for(world.curator).post(
        "/api/v1/groundings/", register_body(world, dimension="nowhere"), format="json"
    )
    body = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [
        ("/dimension", "unknown_reference")
    ]


def test_register_under_a_draft_profile_is_refused_409(world):
    draft = factories.make_profile(publish=False)
    response = client_for(world.curator).post(
        "/api/v1/groundings/", register_body(world, profile=draft.ref), format="json"
    )
    problem(response, 409, "profile_not_published")


def test_bulk_register_creates_every_item_and_answers_201_with_items(world):
    items = [register_body(world) for _ in range(3)]
    items[1]["statement"]["statement_ref"] = "urn:answer:42#s4"
    response = client_for(world.curator).post(
        "/api/v1/groundings/bulk/", {"items": items}, format="json"
    )
    assert response.status_code == 201
    body = response.json()
    assert [item["statement"]["statement_ref"] for item in body["items"]] == [
        "urn:answer:42#s3",
        "urn:answer:42#s4",
        "urn:answer:42#s3",
    ]
    assert {item["revision"] for item in body["items"]} == {1}
    assert GroundingLink.objects.count() == 3
    assert AuditEvent.objects.filter(action="register_bulk", outcome="applied").count() == 3


def test_bulk_register_is_all_or_nothing_and_points_at_the_bad_item(world):
    items = [register_body(world) for _ in range(3)]
    items[2]["anchor"]["selector_profile"] = ""
    del items[1]["owner_ref"]
    response = client_for(world.curator).post(
        "/api/v1/groundings/bulk/", {"items": items}, format="json"
    )
    body = problem(response, 400, "validation_error")
    assert sorted(set(pointers(body))) == ["/items/1/owner_ref", "/items/2/anchor/selector_profile"]
    assert GroundingLink.objects.count() == 0


def test_bulk_register_needs_a_non_empty_items_list(world):
    client = client_for(world.curator)
    for payload in ({"items": []}, {}, [register_body(world)]):
        body = problem(
            client.post("/api/v1/groundings/bulk/", payload, format="json"),
            400,
            "validation_error",
        )
        assert pointers(body) == ["/items"]


def test_bulk_register_needs_the_curator_role_for_every_item(world):
    response = client_for(world.steward).post(
        "/api/v1/groundings/bulk/", {"items": [register_body(world)]}, format="json"
    )
    problem(response, 403, "role_required")
    assert GroundingLink.objects.count() == 0
