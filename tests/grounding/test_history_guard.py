"""Nothing can change a tracked row without writing its history row."""

import pytest

from common.kernel.history import HistoryBypassError
from evidence.models import Passage
from grounding import services
from grounding.models import Assessment, GroundingLink, PassageBinding, StatementBinding
from policies.models import AuditEvent, Dimension, DisclosureDecision, Profile
from tests import factories


@pytest.mark.parametrize(
    "model",
    [
        GroundingLink,
        StatementBinding,
        PassageBinding,
        Dimension,
        Profile,
        Passage,
        DisclosureDecision,
    ],
)
def test_queryset_update_on_a_tracked_model_raises(world, link, model):
    with pytest.raises(HistoryBypassError, match="history"):
        model.objects.all().update(pk=None)


def test_bulk_update_on_a_tracked_model_raises(world, link):
    with pytest.raises(HistoryBypassError):
        GroundingLink.objects.bulk_update([link], ["owner_ref"])


def test_append_only_rows_refuse_update_and_delete(world, link):
    event = AuditEvent.objects.filter(grounding_id=link.pk).get()
    with pytest.raises(HistoryBypassError):
        event.save()
    with pytest.raises(HistoryBypassError):
        event.delete()
    with pytest.raises(HistoryBypassError):
        AuditEvent.objects.all().delete()
    factories.assess(world.reviewer, link)
    with pytest.raises(HistoryBypassError):
        Assessment.objects.all().update(verdict="conflicting")


def test_binding_rows_are_immutable(world, link):
    binding = link.current_passage
    binding.source_selector = {"type": "TextPositionSelector", "start": 0, "end": 1}
    with pytest.raises(HistoryBypassError, match="immutable"):
        binding.save()


def test_a_published_profile_cannot_change_its_pinned_fields(world):
    profile = world.profile
    profile.support_vocabulary = ["quotation"]
    with pytest.raises(HistoryBypassError, match="support_vocabulary"):
        profile.save()


def _revision_history(link):
    return list(
        GroundingLink.history.filter(grounding_id=link.pk)
        .order_by("history_date", "history_id")
        .values_list("revision", "history_user_id", "history_change_reason")
    )


def test_each_operation_leaves_exactly_one_new_history_row_and_one_revision(world, link):
    steps = [
        lambda rev: services.record_anchor_observation(
            actor=world.curator,
            grounding_id=link.pk,
            expected_revision=rev,
            use_builtin_resolver=True,
        ),
        lambda rev: services.bind_assessment(
            actor=world.reviewer,
            grounding_id=link.pk,
            expected_revision=rev,
            assessment=factories.assessment_body(rev),
        ),
        lambda rev: services.revise(
            actor=world.curator,
            grounding_id=link.pk,
            expected_revision=rev,
            changes={"record_state": "admitted", "revision_reason": "admit"},
        ),
        lambda rev: services.withdraw(
            actor=world.access_steward,
            grounding_id=link.pk,
            expected_revision=rev,
            withdrawal={"reason": "retracted", "authority_ref": "urn:policy:w@1"},
        ),
    ]
    actors = [world.curator, world.reviewer, world.curator, world.access_steward]
    for index, step in enumerate(steps, start=1):
        before = _revision_history(link)
        step(index)
        after = _revision_history(link)
        assert len(after) == len(before) + 1
        revision, user_id, reason = after[-1]
        assert revision == index + 1
        assert user_id == actors[index - 1].pk
        assert reason
    assert GroundingLink.objects.get(pk=link.pk).revision == 5
