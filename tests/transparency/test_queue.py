"""Leaves queued by the writes, integrated by the sequencer (both databases)."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from policies.models import AuditEvent
from tests import factories
from transparency import merkle, sequencer
from transparency.enqueue import LOGGED_ACTIONS
from transparency.models import Checkpoint, Leaf, Log, Node, RecordKey
from transparency.selectors import leaf_indexes


def _leaf_json(leaf: Leaf) -> dict:
    return json.loads(bytes(leaf.leaf))


def test_a_registration_queues_one_pending_leaf_committing_to_its_rows(world, link):
    leaf = Leaf.objects.get(grounding_id=link.grounding_id)
    event = AuditEvent.objects.get(grounding_id=link.grounding_id, action="register")
    assert leaf.audit_event == event.event_id
    assert (leaf.action, leaf.revision, leaf.actor_ref) == ("register", 1, "user:user0")
    assert leaf.index is None and leaf.leaf is None
    tables = [c["table"] for c in leaf.commitments]
    assert tables == [
        "grounding_historicalgroundinglink",
        "grounding_historicalpassagebinding",
        "grounding_historicalstatementbinding",
        "policies_auditevent",
    ]
    assert leaf.commitments[-1]["row"] == str(event.event_id)
    assert all(len(base64.b64decode(c["hmac"])) == 32 for c in leaf.commitments)
    # The link's rows under the link's key, the audit row under the log's.
    keys = RecordKey.objects.in_bulk(leaf.key_ids)
    log = Log.objects.get(dimension=world.dimension)
    assert [keys[k].subject for k in leaf.key_ids] == [f"link:{link.grounding_id}"] * 3 + [
        f"log:{log.pk}"
    ]
    # Not sequenced yet: no index to tell.
    assert leaf_indexes([event.event_id]) == {}


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
    leaves = {leaf.grounding_id: leaf for leaf in Leaf.objects.filter(action="register_bulk")}
    assert set(leaves) == {link.grounding_id for link in links}
    for leaf in leaves.values():
        assert [c["table"] for c in leaf.commitments].count("policies_auditevent") == 1
        assert len(leaf.commitments) == 4


def test_only_writes_are_logged(world, link):
    from policies.tokens import issue_token

    issue_token(actor=world.curator, user=world.curator)
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
