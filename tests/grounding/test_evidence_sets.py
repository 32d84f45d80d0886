"""Evidence-set membership is bound to the link: it moves the link's revision."""

import pytest

from common.kernel.refusals import Refusal
from grounding import services
from grounding.models import GroundingLink
from grounding.representation import link_document
from grounding.selectors import current_records, get_link, link_at_revision
from tests import factories


def test_membership_changes_bump_member_revisions_and_show_in_revisions(world, link):
    other = factories.register_link(world.curator, world.dimension, world.profile)
    services.create_evidence_set(
        actor=world.curator,
        values={
            "evidence_set_ref": "urn:set:1",
            "dimension": world.dimension.name,
            "members": [{"grounding_id": str(link.pk), "membership_role": "premise"}],
        },
    )
    assert GroundingLink.objects.get(pk=link.pk).revision == 2
    services.change_evidence_set(
        actor=world.curator,
        evidence_set_ref="urn:set:1",
        expected_revision=1,
        add=[{"grounding_id": str(other.pk), "membership_role": "alternative"}],
    )
    assert GroundingLink.objects.get(pk=link.pk).revision == 2
    assert GroundingLink.objects.get(pk=other.pk).revision == 2
    # A set assessment belongs to the set: it moves no member's revision.
    services.change_evidence_set(
        actor=world.reviewer,
        evidence_set_ref="urn:set:1",
        expected_revision=2,
        set_assessment_ref="urn:eval:set/1",
    )
    assert GroundingLink.objects.get(pk=link.pk).revision == 2
    current = get_link(link.pk)
    now = link_document(current, current_records(current))
    past, records = link_at_revision(current, 1)
    then = link_document(past, records)
    assert [m["evidence_set_ref"] for m in now["evidence_sets"]] == ["urn:set:1"]
    assert then["evidence_sets"] == []
    past, records = link_at_revision(current, 2)
    assert [m["membership_role"] for m in link_document(past, records)["evidence_sets"]] == [
        "premise"
    ]


def test_a_withdrawn_link_cannot_join_a_set(world, link):
    services.withdraw(
        actor=world.curator,
        grounding_id=link.pk,
        expected_revision=1,
        withdrawal={"reason": "retracted", "authority_ref": "urn:policy:w@1"},
    )
    with pytest.raises(Refusal) as caught:
        services.create_evidence_set(
            actor=world.curator,
            values={
                "evidence_set_ref": "urn:set:2",
                "dimension": world.dimension.name,
                "members": [{"grounding_id": str(link.pk), "membership_role": "premise"}],
            },
        )
    assert caught.value.code == "link_withdrawn"
