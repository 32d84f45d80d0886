"""Leaves queued by the writes, integrated by the sequencer (both databases)."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command

from policies.models import AuditEvent
from tests import factories
from transparency import merkle, sequencer
from transparency.choices import LOGGED_ACTIONS
from transparency.models import Checkpoint, Leaf, Log, Node, PendingWrite, RecordKey
from transparency.selectors import leaf_indexes


def _leaf_json(leaf: Leaf) -> dict:
    return json.loads(bytes(leaf.leaf))


def test_a_registration_queues_one_small_pending_write(world, link):
    event = AuditEvent.objects.get(grounding_id=link.grounding_id, action="register")
    pending = PendingWrite.objects.get()
    assert pending.events == [str(event.event_id)]
    # The keys of the rows it stored, by table: the fixture's passage (and its source),
    # written earlier in the same transaction with no event of their own, with them.
    assert sorted(pending.rows) == [
        "evidence_historicalpassage",
        "evidence_historicalsource",
        "grounding_historicalgroundinglink",
        "grounding_historicalpassagebinding",
        "grounding_historicalstatementbinding",
        "policies_auditevent",
    ]
    assert pending.rows["policies_auditevent"] == [str(event.event_id)]
    # Not sequenced yet: no leaf, no index to tell.
    assert not Leaf.objects.exists()
    assert leaf_indexes([event.event_id]) == {}


def test_the_sequencer_makes_the_leaf_committing_to_the_write_s_rows(world, link):
    event = AuditEvent.objects.get(grounding_id=link.grounding_id, action="register")
    assert sequencer.integrate() == 1
    assert not PendingWrite.objects.exists()
    leaf = Leaf.objects.get(grounding_id=link.grounding_id)
    assert leaf.audit_event == event.event_id and leaf.index == 0
    assert (leaf.action, leaf.revision) == ("register", 1)
    assert leaf.actor_ref == f"user:{world.curator.username}"
    tables = [c["table"] for c in leaf.commitments]
    assert tables == [
        "evidence_historicalpassage",
        "evidence_historicalsource",
        "grounding_historicalgroundinglink",
        "grounding_historicalpassagebinding",
        "grounding_historicalstatementbinding",
        "policies_auditevent",
    ]
    assert leaf.commitments[-1]["row"] == str(event.event_id)
    assert all(len(base64.b64decode(c["hmac"])) == 32 for c in leaf.commitments)
    # The link's rows under the link's key, the passage's under its own, the rest
    # under the log's.
    keys = RecordKey.objects.in_bulk(leaf.key_ids)
    log = Log.objects.get(dimension=world.dimension)
    assert [keys[k].subject for k in leaf.key_ids] == [
        f"passage:{world.passage.passage_id}",
        f"log:{log.pk}",
        *[f"link:{link.grounding_id}"] * 3,
        f"log:{log.pk}",
    ]
    assert leaf_indexes([event.event_id]) == {event.event_id: 0}


def test_integrate_gives_indexes_in_queue_order_and_signs_a_checkpoint(world):
    links = [
        factories.register_link(world.curator, world.dimension, world.profile, world.passage)
        for _ in range(3)
    ]
    assert sequencer.integrate() == 3
    assert sequencer.integrate() == 0
    leaves = list(Leaf.objects.order_by("id"))
    assert [leaf.index for leaf in leaves] == [0, 1, 2]
    assert [_leaf_json(leaf)["grounding_id"] for leaf in leaves] == [
        str(link.grounding_id) for link in links
    ]
    for leaf in leaves:
        assert bytes(leaf.leaf_hash) == hashlib.sha256(b"\x00" + bytes(leaf.leaf)).digest()
        body = _leaf_json(leaf)
        assert sorted(body) == [
            "action", "actor_ref", "at", "audit_event", "commitments", "dimension",
            "grounding_id", "index", "revision",
        ]  # fmt: skip
        assert body["dimension"] == world.dimension.name
        assert body["index"] == leaf.index
        assert body["commitments"] == leaf.commitments
    log = Log.objects.get(dimension=world.dimension)
    root = merkle.fold(
        [
            merkle.node_hash(bytes(leaves[0].leaf_hash), bytes(leaves[1].leaf_hash)),
            bytes(leaves[2].leaf_hash),
        ]
    )
    assert (log.size, bytes(log.root_hash)) == (3, root)
    lines = log.checkpoint.split("\n")
    assert lines[:3] == [
        f"localhost/grounding/{world.dimension.name}",
        "3",
        base64.b64encode(root).decode(),
    ]
    assert lines[3] == "" and lines[4].startswith("\u2014 localhost/grounding ")
    assert Checkpoint.objects.get(log=log, size=3).note == log.checkpoint
    # The perfect subtrees of a 3-leaf tree: three leaves and the pair.
    assert set(Node.objects.filter(log=log).values_list("level", "position")) == {
        (0, 0), (0, 1), (0, 2), (1, 0),
    }  # fmt: skip
    events = [leaf.audit_event for leaf in leaves]
    assert leaf_indexes(events) == dict(zip(events, [0, 1, 2], strict=True))


def test_a_bulk_registration_queues_one_leaf_per_link(world):
    from grounding.services import register_many

    items = [factories.link_payload(world.dimension, world.profile, world.passage)] * 3
    links = register_many(actor=world.curator, items=items)
    assert PendingWrite.objects.count() == 1  # one queued write, three events
    assert sequencer.integrate() == 3
    leaves = {leaf.grounding_id: leaf for leaf in Leaf.objects.filter(action="register_bulk")}
    assert set(leaves) == {link.grounding_id for link in links}
    for leaf in leaves.values():
        tables = [c["table"] for c in leaf.commitments]
        assert tables.count("policies_auditevent") == 1
        assert tables.count("grounding_historicalgroundinglink") == 1


def test_batches_take_the_oldest_writes_whole_up_to_batch_events(world, monkeypatch):
    """Writes of 1, 3, 2, 6 and 1 events with BATCH 4: each batch the oldest writes
    that fit (a write larger than BATCH alone), never split, in queue order; past
    the first page of 8 writes too."""
    from grounding.services import register_many

    monkeypatch.setattr(sequencer, "BATCH", 4)
    item = factories.link_payload(world.dimension, world.profile, world.passage)
    sizes = [1, 3, 2, 6, 1] + [1] * 9  # 14 writes: the pages of 8 and 16 are read
    written = []
    for size in sizes:
        if size == 1:
            written.append(
                [
                    factories.register_link(
                        world.curator, world.dimension, world.profile, world.passage
                    )
                ]
            )
        else:
            written.append(register_many(actor=world.curator, items=[item] * size))
    batches = []
    while True:
        done, more = sequencer._integrate_batch("default", wait=True)
        if not done:
            break
        batches.append(done)
        if not more:
            break
    assert batches == [4, 2, 6, 4, 4, 2]
    assert not PendingWrite.objects.exists()
    order = [link.grounding_id for links in written for link in links]
    leaves = Leaf.objects.filter(log__dimension=world.dimension).order_by("index")
    assert [leaf.grounding_id for leaf in leaves] == order
    assert [leaf.index for leaf in leaves] == list(range(len(order)))


def test_only_writes_are_logged(world, link):
    from policies.tokens import issue_token

    issue_token(actor=world.curator, user=world.curator)
    sequencer.integrate()
    logged = set(Leaf.objects.values_list("action", flat=True))
    assert logged == {"register"}
    assert "issue_token" not in LOGGED_ACTIONS and "project" not in LOGGED_ACTIONS


@pytest.mark.django_db
def test_every_dimension_gets_its_log_and_key_when_created():
    dimension = factories.make_dimension()
    log = Log.objects.get(dimension=dimension)
    assert (log.size, bytes(log.root_hash)) == (0, hashlib.sha256(b"").digest())
    key = RecordKey.objects.get(subject=f"log:{log.pk}")
    assert len(bytes(key.key)) == 32 and key.destroyed_at is None


def test_the_sequencer_refuses_to_start_without_its_signing_key(world, link, settings):
    settings.GROUNDING_LOG_SIGNING_KEY = ""
    with pytest.raises(CommandError, match="GROUNDING_LOG_SIGNING_KEY is not set"):
        call_command("run_sequencer", "--once")
    # The service loop stops on it too, rather than roll the same batch back for ever.
    with pytest.raises(ImproperlyConfigured):
        sequencer.run_forever(interval=0.01)
    assert PendingWrite.objects.count() == 1
    assert not Leaf.objects.exists()
