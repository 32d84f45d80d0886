"""PATCH /api/v1/groundings/{id}/ (curator, If-Match)."""

from grounding.models import GroundingLink, StatementBinding
from tests import factories
from tests.api.helpers import assess, client_for, if_match, pointers, problem, url


def test_revise_answers_200_with_the_new_revision_and_etag(world, link):
    response = client_for(world.curator).patch(
        url(link.grounding_id),
        {"owner_ref": "role:other-curator", "revision_reason": "handover"},
        format="json",
        **if_match(1),
    )
    assert response.status_code == 200
    assert response["ETag"] == '"2"'
    body = response.json()
    assert body["revision"] == 2
    assert body["owner_ref"] == "role:other-curator"
    assert body["continuity"]["revision_reason"] == "handover"
    assert body["continuity"]["predecessor_ref"] == f"urn:grounding:{link.grounding_id}@1"


def test_replacing_the_statement_makes_earlier_assessments_stale(world, link):
    assert assess(world, link.grounding_id, 1).status_code == 201
    statement = {**factories.BASE_PAYLOAD["statement"], "statement_ref": "urn:answer:42#s9"}
    response = client_for(world.curator).patch(
        url(link.grounding_id),
        {"statement": statement, "revision_reason": "statement moved"},
        format="json",
        **if_match(2),
    )
    assert response.status_code == 200
    body = response.json()
    assert body["revision"] == 3
    assert body["statement"]["statement_ref"] == "urn:answer:42#s9"
    assert body["statement"]["bound_in_revision"] == 3
    assert body["recheck_state"] == "stale"
    assert body["display_state"] == "unassessed"
    assert "displayed_verdict" not in body
    assert [a["current"] for a in body["assessments"]] == [False]
    assert StatementBinding.objects.filter(link=link).count() == 2


def test_revise_needs_a_revision_reason(world, link):
    response = client_for(world.curator).patch(
        url(link.grounding_id), {"owner_ref": "role:x"}, format="json", **if_match(1)
    )
    body = problem(response, 400, "validation_error")
    assert pointers(body) == ["/revision_reason"]
    assert GroundingLink.objects.get(pk=link.pk).revision == 1


def test_revise_reports_unknown_fields_and_invalid_states(world, link):
    response = client_for(world.curator).patch(
        url(link.grounding_id),
        {"revision_reason": "x", "record_state": "withdrawn", "colour": "red"},
        format="json",
        **if_match(1),
    )
    body = problem(response, 400, "validation_error")
    assert pointers(body) == ["/colour", "/record_state"]


def test_revise_that_changes_nothing_is_refused(world, link):
    response = client_for(world.curator).patch(
        url(link.grounding_id),
        {"owner_ref": link.owner_ref, "revision_reason": "no-op"},
        format="json",
        **if_match(1),
    )
    problem(response, 409, "no_change")


def test_revise_needs_the_curator_role(world, link):
    response = client_for(world.reviewer).patch(
        url(link.grounding_id),
        {"owner_ref": "x", "revision_reason": "x"},
        format="json",
        **if_match(1),
    )
    problem(response, 403, "role_required")


def test_revise_accepts_expected_revision_in_the_body(world, link):
    response = client_for(world.curator).patch(
        url(link.grounding_id),
        {"owner_ref": "role:b", "revision_reason": "x", "expected_revision": 1},
        format="json",
    )
    assert response.status_code == 200
    assert response.json()["revision"] == 2


def test_revise_of_a_withdrawn_link_is_refused_409(world, link):
    withdrawn = client_for(world.curator).post(
        url(link.grounding_id, "withdrawal/"),
        {"reason": "wrong source", "authority_ref": "urn:policy:x"},
        format="json",
        **if_match(1),
    )
    assert withdrawn.status_code == 201
    response = client_for(world.curator).patch(
        url(link.grounding_id),
        {"owner_ref": "x", "revision_reason": "x"},
        format="json",
        **if_match(2),
    )
    problem(response, 409, "link_withdrawn")


def test_revise_of_an_unknown_link_is_404(world):
    response = client_for(world.curator).patch(
        url("01900000-0000-7000-8000-000000000000"),
        {"owner_ref": "x", "revision_reason": "x"},
        format="json",
        **if_match(1),
    )
    problem(response, 404, "not_found")
