"""POST /api/v1/groundings/{id}/assessments/ (reviewer, If-Match)."""

from grounding.models import Assessment
from tests import factories
from tests.api.helpers import assess, client_for, if_match, pointers, problem, url


def test_binding_an_assessment_answers_201_with_record_revision_and_link(world, link):
    response = assess(world, link.grounding_id, 1, assessment_ref="urn:eval:run-7/3")
    assert response.status_code == 201
    assert response["ETag"] == '"2"'
    body = response.json()
    assert body["grounding_id"] == str(link.grounding_id)
    assert body["revision"] == 2
    assert body["assessment_ref"] == "urn:eval:run-7/3"
    assert body["verdict"] == "supporting"
    assert body["grounding_revision"] == 1
    assert body["recorded_revision"] == 2
    assert body["current"] is True
    assert Assessment.objects.get(assessment_ref="urn:eval:run-7/3").pk.hex == body[
        "assessment_id"
    ].replace("-", "")
    assert body["link"]["revision"] == 2
    assert body["link"]["display_state"] == "visible"
    assert body["link"]["displayed_verdict"] == "supporting"


def test_an_assessment_of_another_revision_is_409_assessment_input_mismatch(world, link):
    client_for(world.curator).patch(
        url(link.grounding_id),
        {"owner_ref": "x", "revision_reason": "r"},
        format="json",
        **if_match(1),
    )
    response = client_for(world.reviewer).post(
        url(link.grounding_id, "assessments/"),
        factories.assessment_body(1),
        format="json",
        **if_match(2),
    )
    body = problem(response, 409, "assessment_input_mismatch")
    assert pointers(body) == ["/assessed_inputs/grounding_revision"]
    assert body["current_revision"] == 2
    assert Assessment.objects.count() == 0


def test_disagreeing_assessments_make_the_link_disputed(world, link):
    assert assess(world, link.grounding_id, 1).status_code == 201
    response = assess(world, link.grounding_id, 2, verdict="conflicting")
    assert response.status_code == 201
    body = response.json()["link"]
    assert body["display_state"] == "disputed"
    assert body["recheck_state"] == "disputed"
    assert "displayed_verdict" not in body
    assert [a["verdict"] for a in body["assessments"]] == ["supporting", "conflicting"]


def test_an_assessment_needs_the_reviewer_role(world, link):
    response = client_for(world.curator).post(
        url(link.grounding_id, "assessments/"),
        factories.assessment_body(1),
        format="json",
        **if_match(1),
    )
    problem(response, 403, "role_required")


def test_an_invalid_assessment_names_each_offender(world, link):
    body = factories.assessment_body(1, verdict="probably", reviewer_kind="oracle")
    del body["method_ref"]
    response = client_for(world.reviewer).post(
        url(link.grounding_id, "assessments/"), body, format="json", **if_match(1)
    )
    problem_body = problem(response, 400, "validation_error")
    assert pointers(problem_body) == ["/method_ref", "/reviewer_kind", "/verdict"]


def test_a_duplicate_assessment_ref_is_refused(world, link):
    assert assess(world, link.grounding_id, 1, assessment_ref="urn:eval:a").status_code == 201
    response = assess(world, link.grounding_id, 2, assessment_ref="urn:eval:a")
    problem(response, 409, "assessment_duplicate")


def test_the_returned_record_withholds_what_the_reviewer_may_not_see(world, link):
    from policies import governance
    from policies.models import DisclosureDecision

    internal = DisclosureDecision.objects.get(
        dimension=world.dimension, recipient_scope="role:reviewer", internal=True
    )
    governance.revoke_disclosure_decision(actor=world.access_steward, decision=internal)
    governance.record_disclosure_decision(
        actor=world.access_steward,
        dimension=world.dimension,
        values={
            "decision_ref": "urn:test:reviewers-blind",
            "recipient_scope": "role:reviewer",
            "purpose": "review",
            "fields": ["statement"],
        },
    )
    response = assess(world, link.grounding_id, 1)
    assert response.status_code == 201
    body = response.json()
    assert "verdict" not in body and "reviewer_ref" not in body
    assert "assessments.verdict" in body["link"]["withheld"]
