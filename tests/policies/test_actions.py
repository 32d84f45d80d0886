"""The one write idiom (policies.actions): bodies compose inside their caller's
transaction, public entries are one durable transaction each, and a refusal is
audited after the writes it undid. Transactional tests: commits are real."""

from __future__ import annotations

import contextlib

import pytest
from django.db import transaction
from django.db.transaction import TransactionManagementError

from common.kernel.refusals import Refusal
from grounding import services
from grounding.models import GroundingLink, Withdrawal
from policies import audit
from policies.actions import (
    NestedEntryError,
    audit_refusal,
    composable,
    public_entry,
    refusal_audited,
)
from policies.choices import Role
from policies.models import AuditEvent
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)


@composable
def do_note(*, actor, note: str) -> AuditEvent:
    """A body that writes one row."""
    return audit.record(actor=actor, action="note", references={"note": note})


@composable
def do_note_then_refuse(*, actor, note: str) -> None:
    """A body that writes a row, then refuses."""
    audit.record(actor=actor, action="note", references={"note": note})
    raise Refusal("test_refused", "refused after writing.")


note = public_entry("note", do_note)
note_then_refuse = public_entry("note_then_refuse", do_note_then_refuse)


def notes() -> list[str]:
    return sorted(
        e.references["note"] for e in AuditEvent.objects.filter(action="note", outcome="applied")
    )


def refused() -> list[tuple[str, str, str]]:
    return [
        (e.action, e.code, e.actor_ref)
        for e in AuditEvent.objects.filter(outcome="refused").order_by("occurred_at", "event_id")
    ]


def test_bodies_commit_with_their_callers_transaction():
    with transaction.atomic():
        do_note(actor=None, note="a")
        do_note(actor=None, note="b")
        assert notes() == ["a", "b"]
    assert notes() == ["a", "b"]


def test_bodies_roll_back_with_their_callers_transaction():
    with pytest.raises(RuntimeError), transaction.atomic():
        do_note(actor=None, note="a")
        raise RuntimeError("the caller fails after the body")
    assert notes() == []


def test_a_body_on_its_own_writes_all_or_nothing():
    with pytest.raises(Refusal):
        do_note_then_refuse(actor=None, note="half")
    assert notes() == []


def test_a_refusal_under_refusal_audited_rolls_back_only_that_body_and_is_audited():
    with transaction.atomic():
        do_note(actor=None, note="before")
        with pytest.raises(Refusal) as refusal, refusal_audited("note_then_refuse", actor=None):
            do_note_then_refuse(actor=None, note="refused")
        do_note(actor=None, note="after")
    assert refusal.value.code == "test_refused"
    assert notes() == ["after", "before"]
    assert refused() == [("note_then_refuse", "test_refused", "anonymous")]


def test_a_refusal_audited_inside_a_transaction_goes_with_it():
    with pytest.raises(RuntimeError), transaction.atomic():
        with pytest.raises(Refusal), refusal_audited("note_then_refuse", actor=None):
            do_note_then_refuse(actor=None, note="refused")
        raise RuntimeError("the caller fails afterwards")
    assert refused() == []


def test_a_body_refusal_caught_without_a_savepoint_cannot_be_committed_half_done():
    with pytest.raises(TransactionManagementError), transaction.atomic():
        do_note(actor=None, note="before")
        with contextlib.suppress(Refusal):  # caught, with no savepoint of its own
            do_note_then_refuse(actor=None, note="refused")
        do_note(actor=None, note="after")  # the transaction is marked for rollback
    assert notes() == []


def test_a_public_entry_is_one_transaction_and_commits():
    event = note(actor=None, note="entry")
    assert event.references == {"note": "entry"}
    assert notes() == ["entry"]
    assert note.__name__ == "note" and note.__doc__ == do_note.__doc__
    assert not hasattr(note, "__wrapped__")


def test_a_public_entry_refuses_to_run_inside_another_transaction():
    with transaction.atomic():
        with pytest.raises(NestedEntryError, match=r"call do_note there \(under refusal_audited"):
            note(actor=None, note="nested")
        do_note(actor=None, note="the body instead")
    assert notes() == ["the body instead"]
    assert refused() == []


def test_a_public_entry_audits_its_refusal_after_the_rollback():
    user = factories.UserFactory(username="refused-one")
    with pytest.raises(Refusal) as refusal:
        note_then_refuse(actor=user, note="half")
    assert refusal.value.code == "test_refused"
    assert notes() == []
    event = AuditEvent.objects.get()
    assert (event.action, event.outcome, event.code, event.actor) == (
        "note_then_refuse",
        "refused",
        "test_refused",
        user,
    )


def test_a_public_entry_screens_unstorable_input_before_the_body_runs():
    with pytest.raises(Refusal) as refusal:
        note(actor=None, note="a\x00b")
    assert refusal.value.code == "validation_error"
    assert [(o.pointer, o.code) for o in refusal.value.offenders] == [
        ("/note", "unstorable_character")
    ]
    assert notes() == []
    assert refused() == [("note", "validation_error", "anonymous")]


def test_audit_refusal_outside_any_transaction_commits_on_its_own():
    dimension = factories.make_dimension("demo")
    member = factories.user_with_roles(dimension, Role.REVIEWER)
    audit_refusal("read", "not_found", actor=member, dimension="demo", references={"view": "x"})
    event = AuditEvent.objects.get(outcome="refused")
    assert (event.action, event.code, event.dimension_ref, event.references) == (
        "read",
        "not_found",
        "demo",
        {"view": "x"},
    )


def test_a_refusal_is_audited_under_a_dimension_only_for_its_members():
    factories.make_dimension("demo")
    stranger = factories.UserFactory(username="stranger")
    for actor in (None, stranger):
        audit_refusal("read", "not_found", actor=actor, dimension="demo")
    assert sorted(
        AuditEvent.objects.filter(outcome="refused").values_list("actor_ref", "dimension_ref")
    ) == [("anonymous", ""), ("user:stranger", "")]


def test_grounding_bodies_compose_and_a_refused_one_leaves_the_others(world, link):
    """As the admin's change page does: two operations in one transaction, the second
    refused (stale revision) under refusal_audited."""
    with transaction.atomic():
        revised = services.do_revise(
            actor=world.curator,
            grounding_id=link.pk,
            expected_revision=1,
            changes={"owner_ref": "urn:team:b", "revision_reason": "handover"},
        )
        kwargs = {
            "actor": world.access_steward,
            "grounding_id": link.pk,
            "expected_revision": 1,
            "withdrawal": {"reason": "retracted", "authority_ref": "urn:decision:r"},
        }
        context = services.refusal_context(kwargs)
        with pytest.raises(Refusal) as refusal, refusal_audited("withdraw", **context):
            services.do_withdraw(**kwargs)
    assert (revised.revision, refusal.value.code) == (2, "revision_mismatch")
    stored = GroundingLink.objects.get(pk=link.pk)
    assert (stored.revision, stored.owner_ref, stored.record_state) == (
        2,
        "urn:team:b",
        "candidate",
    )
    assert not Withdrawal.objects.exists()
    assert GroundingLink.history.filter(grounding_id=link.pk).count() == 2
    events = AuditEvent.objects.filter(grounding_id=link.pk).order_by("occurred_at", "event_id")
    assert [
        (e.action, e.outcome, e.code, e.dimension_ref, e.expected_revision) for e in events
    ] == [
        ("register", "applied", "", world.dimension.name, None),
        ("revise", "applied", "", world.dimension.name, 1),
        ("withdraw", "refused", "revision_mismatch", world.dimension.name, 1),
    ]


def test_the_services_public_entries_refuse_to_nest(world, link):
    with transaction.atomic(), pytest.raises(NestedEntryError, match="call do_revise there"):
        services.revise(
            actor=world.curator,
            grounding_id=link.pk,
            expected_revision=1,
            changes={"owner_ref": "urn:team:b", "revision_reason": "handover"},
        )
    assert GroundingLink.objects.get(pk=link.pk).revision == 1
