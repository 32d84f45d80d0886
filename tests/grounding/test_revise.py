import pytest

from common.kernel.refusals import Refusal
from grounding import services
from grounding.choices import DisplayState, RecheckState, RecordState, ResolutionState
from grounding.models import GroundingLink, PassageBinding, StatementBinding
from policies.models import AuditEvent
from tests import factories


def revise(world, link, changes, *, actor=None, expected=None):
    return services.revise(
        actor=actor or world.curator,
        grounding_id=link.pk,
        expected_revision=link.revision if expected is None else expected,
        changes=changes,
    )


def assess(world, link, verdict="supporting"):
    services.bind_assessment(
        actor=world.reviewer,
        grounding_id=link.pk,
        expected_revision=link.revision,
        assessment=factories.assessment_body(link.revision, verdict=verdict),
    )
    return GroundingLink.objects.get(pk=link.pk)


def test_revising_the_anchor_writes_a_new_binding_naming_its_predecessor(world, link):
    old_binding = link.current_passage
    revised = revise(
        world,
        link,
        {
            "anchor": {"source_selector": {"type": "TextPositionSelector", "start": 0, "end": 10}},
            "revision_reason": "tighter span",
        },
    )
    assert revised.revision == 2
    new_binding = revised.current_passage
    assert new_binding.pk != old_binding.pk
    assert new_binding.predecessor_id == old_binding.pk
    assert new_binding.bound_in_revision == 2
    assert new_binding.passage_id == old_binding.passage_id
    # The old row is untouched.
    assert (
        PassageBinding.objects.get(pk=old_binding.pk).source_selector["exact"] == "opened in 1932"
    )
    assert revised.predecessor_ref == f"urn:grounding:{link.pk}@1"
    assert revised.revision_reason == "tighter span"
    assert revised.resolution_state == ResolutionState.UNATTEMPTED


def test_an_endpoint_revision_makes_earlier_assessments_stale(world, link):
    link = assess(world, link)
    assert link.display_state == DisplayState.VISIBLE
    revised = revise(
        world,
        link,
        {"statement": {"statement_ref": "urn:answer:42#s4"}, "revision_reason": "resegmented"},
    )
    assert revised.display_state == DisplayState.UNASSESSED
    assert revised.recheck_state == RecheckState.STALE
    assert revised.basis_revision == 3
    assert revised.support_verdict_ref == ""
    assert StatementBinding.objects.filter(link=link).count() == 2


def test_a_support_scope_change_invalidates_the_displayed_assessment(world, link):
    link = assess(world, link)
    revised = revise(
        world, link, {"support": {"support_scope": {"covers": "year"}}, "revision_reason": "scope"}
    )
    assert revised.display_state == DisplayState.UNASSESSED


def test_a_non_basis_change_keeps_the_assessment_current(world, link):
    link = assess(world, link)
    revised = revise(
        world, link, {"owner_ref": "role:other-curator", "revision_reason": "handover"}
    )
    assert revised.display_state == DisplayState.VISIBLE
    assert revised.basis_revision == 1


def test_revise_with_a_stale_revision_is_refused_and_audited(world, link):
    revise(world, link, {"record_state": "admitted", "revision_reason": "admitted"})
    with pytest.raises(Refusal) as caught:
        revise(world, link, {"owner_ref": "x", "revision_reason": "late"}, expected=1)
    assert caught.value.code == "revision_mismatch"
    assert caught.value.extra == {"current_revision": 2}
    assert GroundingLink.objects.get(pk=link.pk).owner_ref == "role:grounding-curator"
    assert AuditEvent.objects.filter(action="revise", code="revision_mismatch").count() == 1


def test_revise_requires_a_reason(world, link):
    with pytest.raises(Refusal) as caught:
        revise(world, link, {"owner_ref": "role:other"})
    assert [(o.pointer, o.code) for o in caught.value.offenders] == [
        ("/revision_reason", "required")
    ]


def test_revise_that_changes_nothing_is_refused(world, link):
    with pytest.raises(Refusal) as caught:
        revise(world, link, {"owner_ref": link.owner_ref, "revision_reason": "noop"})
    assert caught.value.code == "no_change"
    assert GroundingLink.objects.get(pk=link.pk).revision == 1


def test_revise_cannot_withdraw_or_dispose_through_record_state(world, link):
    with pytest.raises(Refusal) as caught:
        revise(world, link, {"record_state": "withdrawn", "revision_reason": "sneaky"})
    assert [(o.pointer, o.code) for o in caught.value.offenders] == [("/record_state", "enum")]


def test_post_generation_citation_never_becomes_generation_use_without_a_trace(world, link):
    with pytest.raises(Refusal) as caught:
        revise(world, link, {"support": {"use_basis": "generation_input"}, "revision_reason": "x"})
    assert [o.code for o in caught.value.offenders] == ["generation_evidence_required"]
    assert GroundingLink.objects.get(pk=link.pk).use_basis == "post_generation"


def test_revise_by_a_reviewer_is_refused(world, link):
    with pytest.raises(Refusal) as caught:
        revise(world, link, {"owner_ref": "x", "revision_reason": "y"}, actor=world.reviewer)
    assert caught.value.code == "role_required"


def test_mark_for_recheck_withholds_a_positive_display(world, link):
    link = assess(world, link)
    revised = revise(world, link, {"recheck_state": "pending_review", "revision_reason": "notice"})
    assert revised.recheck_state == RecheckState.PENDING_REVIEW
    assert revised.display_state == DisplayState.UNASSESSED


def test_admitting_a_candidate_records_a_revision(world, link):
    revised = revise(world, link, {"record_state": "admitted", "revision_reason": "admitted"})
    assert revised.record_state == RecordState.ADMITTED
    history = GroundingLink.history.filter(grounding_id=link.pk).order_by("revision")
    assert [(h.revision, h.history_change_reason) for h in history] == [
        (1, "registered as a candidate"),
        (2, "admitted"),
    ]
