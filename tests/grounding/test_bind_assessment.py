import pytest

from common.kernel.refusals import Refusal
from grounding import services
from grounding.choices import DisplayState, RecheckState
from grounding.models import Assessment, GroundingLink
from policies.choices import AuditOutcome
from policies.models import AuditEvent
from tests import factories


def bind(world, link, **overrides):
    return services.bind_assessment(
        actor=world.reviewer,
        grounding_id=link.pk,
        expected_revision=link.revision,
        assessment=factories.assessment_body(link.revision, **overrides),
    )


def current(link):
    return GroundingLink.objects.get(pk=link.pk)


def test_bind_assessment_makes_a_supporting_link_visible_and_bumps_revision(world, link):
    record = bind(world, link)
    link = current(link)
    assert link.revision == 2
    assert (record.grounding_revision, record.recorded_revision) == (1, 2)
    assert link.display_state == DisplayState.VISIBLE
    assert link.displayed_verdict == "supporting"
    assert link.support_verdict_ref == record.assessment_ref
    assert link.recheck_state == RecheckState.CURRENT


def test_bind_assessment_with_inputs_of_another_revision_is_refused(world, link):
    with pytest.raises(Refusal) as caught:
        services.bind_assessment(
            actor=world.reviewer,
            grounding_id=link.pk,
            expected_revision=1,
            assessment=factories.assessment_body(7),
        )
    assert caught.value.code == "assessment_input_mismatch"
    assert caught.value.extra == {"current_revision": 1}
    assert [o.pointer for o in caught.value.offenders] == ["/assessed_inputs/grounding_revision"]
    assert Assessment.objects.count() == 0
    assert current(link).revision == 1
    event = AuditEvent.objects.get(action="bind_assessment")
    assert (event.outcome, event.code, event.grounding_id) == (
        AuditOutcome.REFUSED,
        "assessment_input_mismatch",
        link.pk,
    )


def test_bind_assessment_with_a_stale_expected_revision_is_refused(world, link):
    bind(world, link)
    with pytest.raises(Refusal) as caught:
        services.bind_assessment(
            actor=world.reviewer,
            grounding_id=link.pk,
            expected_revision=1,
            assessment=factories.assessment_body(1),
        )
    assert caught.value.code == "revision_mismatch"
    assert caught.value.extra == {"current_revision": 2}


def test_bind_assessment_by_a_curator_is_refused(world, link):
    with pytest.raises(Refusal) as caught:
        services.bind_assessment(
            actor=world.curator,
            grounding_id=link.pk,
            expected_revision=1,
            assessment=factories.assessment_body(1),
        )
    assert caught.value.code == "role_required"


def test_disagreeing_assessments_without_selection_are_disputed_and_both_kept(world, link):
    first = bind(world, link, verdict="supporting")
    link = current(link)
    second = bind(world, link, verdict="conflicting")
    link = current(link)
    assert link.display_state == DisplayState.DISPUTED
    assert link.recheck_state == RecheckState.DISPUTED
    assert link.displayed_verdict == ""
    assert second.competing_assessment_refs == [first.assessment_ref]
    assert Assessment.objects.filter(link=link).count() == 2


def test_a_policy_selection_resolves_display_but_keeps_the_competitor(world, link):
    first = bind(world, link, verdict="conflicting")
    link = current(link)
    chosen = bind(world, link, verdict="partial", selection_basis_ref="urn:policy:select@1")
    link = current(link)
    assert link.display_state == DisplayState.VISIBLE
    assert link.displayed_verdict == "partial"
    assert link.support_verdict_ref == chosen.assessment_ref
    assert chosen.competing_assessment_refs == [first.assessment_ref]


def test_an_assessment_without_authority_never_makes_a_positive_display(world, link):
    bind(world, link, authority_ref="")
    assert current(link).display_state == DisplayState.UNASSESSED


def test_a_duplicate_assessment_ref_is_refused(world, link):
    bind(world, link, assessment_ref="urn:eval:same")
    link = current(link)
    with pytest.raises(Refusal) as caught:
        bind(world, link, assessment_ref="urn:eval:same")
    assert caught.value.code == "assessment_duplicate"


def test_bind_assessment_reports_every_invalid_field(world, link):
    with pytest.raises(Refusal) as caught:
        services.bind_assessment(
            actor=world.reviewer,
            grounding_id=link.pk,
            expected_revision=1,
            assessment={"verdict": "true", "reviewer_kind": "oracle", "assessed_inputs": {}},
        )
    pointers = {(o.pointer, o.code) for o in caught.value.offenders}
    assert {
        ("/assessment_ref", "required"),
        ("/method_ref", "required"),
        ("/verdict", "enum"),
        ("/reviewer_kind", "enum"),
    } <= pointers


def test_an_assessment_on_a_withdrawn_link_is_refused(world, link):
    services.withdraw(
        actor=world.access_steward,
        grounding_id=link.pk,
        expected_revision=1,
        withdrawal={"reason": "source retracted", "authority_ref": "urn:policy:w@1"},
    )
    with pytest.raises(Refusal) as caught:
        bind(world, current(link))
    assert caught.value.code == "link_withdrawn"


def test_bind_assessment_never_changes_use_basis(world, link):
    bind(world, link, verdict="supporting")
    assert current(link).use_basis == "post_generation"
