"""The outbox (API.md "Event feed"): every committed write stores its events in its own
transaction; a rolled-back write stores none; `sequence` is the link's revision."""

from __future__ import annotations

import pytest
from django.db import transaction

from feed.models import Delivery, Event
from grounding import services
from policies import governance
from tests import factories


def _events(subject=None):
    events = Event.objects.order_by("id")
    if subject is not None:
        events = events.filter(subject=str(subject))
    return list(events.values_list("type", "subject", "sequence", "data"))


def test_a_links_operations_are_events_with_its_revisions_as_sequence(world, link):
    factories.assess(world.reviewer, link)
    services.withdraw(
        actor=world.access_steward,
        grounding_id=link.pk,
        expected_revision=2,
        withdrawal={"reason": "wrong", "authority_ref": "urn:policy:w"},
    )
    gid = str(link.pk)
    assert [(t, s, n) for t, s, n, _ in _events(gid)] == [
        ("org.grounding.link.registered", gid, 1),
        ("org.grounding.link.assessed", gid, 2),
        ("org.grounding.link.withdrawn", gid, 3),
    ]
    data = [d for *_, d in _events(gid)]
    assert data[0] == {
        "grounding_id": gid,
        "revision": 1,
        "record_state": "candidate",
        "recheck_state": "current",
        "display_state": "unassessed",
    }
    assert data[2]["record_state"] == "withdrawn"
    event = Event.objects.get(subject=gid, sequence=1)
    assert event.event_id.version == 7  # time-ordered: its index grows at one end
    assert event.dimension_id == world.dimension.pk
    assert event.audit_event_id is not None


def test_a_disposal_event_carries_ids_and_states_only(world, link):
    services.dispose(
        actor=world.access_steward,
        grounding_id=link.pk,
        expected_revision=1,
        disposal={"receipt_ref": "urn:receipt:1", "policy_ref": "urn:policy:retention"},
    )
    (kind, _, sequence, data) = _events(link.pk)[-1]
    assert (kind, sequence) == ("org.grounding.link.disposed", 2)
    assert set(data) == {"grounding_id", "revision", "record_state", "recheck_state",
                         "display_state"}  # fmt: skip
    assert data["record_state"] == "disposed"


def test_a_rolled_back_write_emits_nothing(world):
    before = Event.objects.count()
    with pytest.raises(RuntimeError), transaction.atomic():
        services.do_register(
            actor=world.curator,
            payload=factories.link_payload(world.dimension, world.profile, world.passage),
        )
        assert Event.objects.count() == before + 1  # written inside the transaction
        raise RuntimeError("the caller fails after the write")
    assert Event.objects.count() == before


def test_refused_writes_and_reads_emit_nothing(world, link):
    before = Event.objects.count()
    with pytest.raises(Exception):  # noqa: B017 - any refusal
        services.withdraw(
            actor=world.reviewer,
            grounding_id=link.pk,
            expected_revision=1,
            withdrawal={"reason": "x", "authority_ref": "urn:policy:w"},
        )
    assert Event.objects.count() == before


def test_decisions_are_events_of_their_ref(world):
    decision = governance.record_disclosure_decision(
        actor=world.access_steward,
        dimension=world.dimension,
        values={
            "decision_ref": "urn:access:feed-1",
            "recipient_scope": "partner:acme",
            "purpose": "citation-display",
            "fields": ["statement"],
        },
    )
    governance.revoke_disclosure_decision(actor=world.access_steward, decision=decision)
    assert _events("urn:access:feed-1") == [
        ("org.grounding.decision.recorded", "urn:access:feed-1", 1,
         {"decision_ref": "urn:access:feed-1", "decision_state": "recorded"}),
        ("org.grounding.decision.revoked", "urn:access:feed-1", 2,
         {"decision_ref": "urn:access:feed-1", "decision_state": "revoked"}),
    ]  # fmt: skip
    assert Delivery.objects.count() == 0  # no subscription, nothing owed
