import pytest

from common.kernel.refusals import Refusal
from grounding import services
from grounding.models import Projection
from policies import governance
from policies.models import AuditEvent


def decide(world, **overrides):
    values = {
        "decision_ref": "urn:access:d9",
        "recipient_scope": "partner:acme",
        "purpose": "citation-display",
        "fields": ["statement", "support", "passage.locator", "passage.title"],
        "grounding_ids": None,
    }
    values.update(overrides)
    return governance.record_disclosure_decision(
        actor=world.access_steward, dimension=world.dimension, values=values
    )


def refusal_of_project(world, link, *, actor=None) -> Refusal:
    """The refusal of projecting `link` for partner:acme's citation display (by the
    projection agent unless another actor is named)."""
    with pytest.raises(Refusal) as caught:
        services.project(
            actor=actor or world.projection_agent,
            grounding_id=link.pk,
            recipient="partner:acme",
            purpose="citation-display",
        )
    return caught.value


def test_project_shows_covered_fields_and_names_the_withheld(world, link):
    decide(world)
    body = services.project(
        actor=world.projection_agent,
        grounding_id=link.pk,
        recipient="partner:acme",
        purpose="citation-display",
    )
    assert body["decision_ref"] == "urn:access:d9"
    assert body["revision"] == 1
    assert body["display_state"] == "unassessed"
    assert body["fields"]["statement"]["statement_ref"] == "urn:answer:42#s3"
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
    stored = Projection.objects.get(link=link)
    assert (stored.projection_revision, stored.sha256) == (1, body["sha256"])
    assert AuditEvent.objects.filter(action="project", outcome="applied").count() == 1


def test_project_without_a_covering_decision_is_refused(world, link):
    assert refusal_of_project(world, link).code == "disclosure_not_decided"
    assert Projection.objects.count() == 0


def test_a_revoked_decision_no_longer_covers(world, link):
    decision = decide(world)
    governance.revoke_disclosure_decision(actor=world.access_steward, decision=decision)
    assert refusal_of_project(world, link).code == "disclosure_not_decided"


def test_a_decision_listing_other_links_does_not_cover_this_one(world, link):
    decide(world, grounding_ids=["0190e7a2-0000-7000-8000-000000000000"])
    assert refusal_of_project(world, link).code == "disclosure_not_decided"


def test_project_by_a_curator_is_refused(world, link):
    decide(world)
    assert refusal_of_project(world, link, actor=world.curator).code == "role_required"


def test_project_refuses_overlong_recipient_and_purpose(world, link):
    with pytest.raises(Refusal) as caught:
        services.project(
            actor=world.projection_agent,
            grounding_id=link.pk,
            recipient="r" * 256,
            purpose="p" * 129,
        )
    assert [(o.pointer, o.code) for o in caught.value.offenders] == [
        ("/recipient", "max_length"),
        ("/purpose", "max_length"),
    ]
