"""GET …/projection/?recipient=…&purpose=…&format=… (projection_agent)."""

from grounding.models import Projection
from policies import governance
from tests.api.helpers import client_for, pointers, problem, url


def _decide(world, **values):
    return governance.record_disclosure_decision(
        actor=world.access_steward,
        dimension=world.dimension,
        values={
            "decision_ref": "urn:access:d9",
            "recipient_scope": "partner:acme",
            "purpose": "citation-display",
            "fields": ["statement", "support", "passage.locator", "passage.title"],
            **values,
        },
    )


def _project(world, link, **params):
    query = {"recipient": "partner:acme", "purpose": "citation-display", "format": "native"}
    query.update(params)
    return client_for(world.projection_agent).get(url(link.grounding_id, "projection/"), query)


def test_projection_under_a_decision_discloses_only_covered_fields(world, link):
    _decide(world)
    response = _project(world, link)
    assert response.status_code == 200
    assert response["ETag"] == '"1"'
    body = response.json()
    assert body["grounding_id"] == str(link.grounding_id)
    assert body["revision"] == 1
    assert body["display_state"] == "unassessed"
    assert body["decision_ref"] == "urn:access:d9"
    assert body["fields"]["statement"]["statement_ref"] == "urn:answer:42#s3"
    assert body["fields"]["support"]["support_kind"] == "quotation"
    assert body["fields"]["passage"]["title"] == "Bridge history"
    assert "excerpt" not in body["fields"]["passage"]
    assert "source_selector" not in body["fields"]["anchor"]
    assert body["withheld"] == [
        "anchor.selector",
        "assessments.reviewer",
        "assessments.verdict",
        "passage.excerpt",
    ]
    assert [entry["distinction"] for entry in body["loss_report"]] == body["withheld"]
    # The excerpt (the passage text beyond the statement) never leaves.
    assert "It spans the river" not in response.content.decode()
    assert Projection.objects.get(link=link).decision_ref == "urn:access:d9"


def test_projection_without_a_decision_is_403_disclosure_not_decided(world, link):
    body = problem(_project(world, link), 403, "disclosure_not_decided")
    assert "opened in 1932" not in str(body)
    assert Projection.objects.count() == 0


def test_projection_under_a_revoked_decision_is_refused(world, link):
    decision = _decide(world)
    governance.revoke_disclosure_decision(actor=world.access_steward, decision=decision)
    problem(_project(world, link), 403, "disclosure_not_decided")


def test_projection_needs_the_projection_agent_role(world, link):
    _decide(world)
    response = client_for(world.curator).get(
        url(link.grounding_id, "projection/"),
        {"recipient": "partner:acme", "purpose": "citation-display"},
    )
    problem(response, 403, "role_required")


def test_projection_parameters_are_required_and_bounded(world, link):
    _decide(world)
    body = problem(
        client_for(world.projection_agent).get(url(link.grounding_id, "projection/")),
        400,
        "validation_error",
    )
    assert pointers(body) == ["/purpose", "/recipient"]
    body = problem(_project(world, link, recipient="x" * 300, format="pdf"), 400,
                   "validation_error")  # fmt: skip
    assert pointers(body) == ["/format", "/recipient"]


def test_an_export_format_is_projected_under_the_same_decision(world, link):
    _decide(world)
    response = _project(world, link, format="web-annotation")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["format"] == "web-annotation"
    assert body["decision_ref"] == "urn:access:d9"
    assert "passage.excerpt" in body["withheld"]
    assert "It spans the river" not in response.content.decode()
