"""Tamper drills on PostgreSQL (issue #28): what someone with database access might
do to the record, and what verify_log then says, at which index, table and row."""

from __future__ import annotations

import pytest
from django.db import connection

from grounding.models import GroundingLink
from policies.models import AuditEvent
from tests.conftest import requires_postgres
from tests.transparency.helpers import two_links_and_a_revision
from transparency import merkle, notes, sequencer
from transparency.models import Checkpoint, Leaf, Log, Node
from transparency.verifier import verify

pytestmark = requires_postgres


def _sql(statement: str, params: list | None = None) -> int:
    with connection.cursor() as cursor:
        cursor.execute(statement, params or [])
        return cursor.rowcount


def _verify(world, since: str | None = None):
    return verify(world.dimension.name, verifier_key=notes.signer().verifier_key, since=since)


@pytest.fixture
def written(world):
    """Two registrations and a revision of the first, integrated: leaves 0, 1, 2."""
    first, second = two_links_and_a_revision(world)
    assert _verify(world).ok
    return first, second


def _history_id(link, revision: int) -> int:
    return (
        GroundingLink.history.filter(grounding_id=link.grounding_id, revision=revision)
        .values_list("history_id", flat=True)
        .get()
    )


def test_an_updated_history_row_is_reported_at_its_leaf(world, written):
    first, _ = written
    row = _history_id(first, 2)
    assert _sql(
        "UPDATE grounding_historicalgroundinglink SET owner_ref = 'mallory' WHERE history_id = %s",
        [row],
    )
    problem = _verify(world).first()
    assert (problem.finding, problem.index) == ("commitment", 2)
    assert (problem.table, problem.row) == ("grounding_historicalgroundinglink", str(row))


def test_an_updated_audit_row_is_reported_at_its_leaf(world, written):
    _, second = written
    event = AuditEvent.objects.get(grounding_id=second.grounding_id, action="register")
    _sql(
        "UPDATE policies_auditevent SET actor_ref = 'user:mallory' WHERE event_id = %s",
        [event.event_id],
    )
    report = _verify(world)
    problem = report.first()
    assert (problem.finding, problem.index) == ("audit", 1)
    assert (problem.table, problem.row) == ("policies_auditevent", str(event.event_id))
    # Its commitment disagrees too.
    assert ("commitment", 1, "policies_auditevent") in {
        (p.finding, p.index, p.table) for p in report.problems
    }


def test_an_updated_leaf_is_reported_at_its_index(world, written):
    _sql(
        "UPDATE transparency_leaf SET leaf = convert_to(replace(convert_from(leaf, 'UTF8'), "
        "'\"revise\"', '\"revize\"'), 'UTF8') WHERE \"index\" = 2"
    )
    problem = _verify(world).first()
    assert (problem.finding, problem.index) == ("leaf_hash", 2)


def test_a_leaf_rewritten_with_its_hash_is_reported_by_the_tree(world, written):
    _sql(
        "UPDATE transparency_leaf SET leaf = convert_to(replace(convert_from(leaf, 'UTF8'), "
        "'\"register\"', '\"registre\"'), 'UTF8') WHERE \"index\" = 1"
    )
    _sql(
        "UPDATE transparency_leaf SET leaf_hash = sha256('\\x00'::bytea || leaf) "
        'WHERE "index" = 1'
    )
    report = _verify(world)
    found = {(p.finding, p.index) for p in report.problems}
    assert report.first().index == 1
    assert ("tree", 1) in found and "root" in {p.finding for p in report.problems}


def test_a_deleted_leaf_is_reported_at_its_index(world, written):
    assert _sql('DELETE FROM transparency_leaf WHERE "index" = 1') == 1
    report = _verify(world)
    problem = report.first()
    assert (problem.finding, problem.index) == ("leaf_missing", 1)
    # Its audit event is now an applied write without a leaf.
    assert "audit" in {p.finding for p in report.problems}


def test_a_write_that_bypassed_the_log_is_reported(world, written):
    first, _ = written
    _sql(
        "INSERT INTO policies_auditevent (event_id, occurred_at, actor_ref, action, outcome, "
        'code, grounding_id, dimension_ref, decision_ref, request_id, "references") '
        "VALUES (gen_random_uuid(), clock_timestamp(), 'user:x', 'revise', 'applied', '', "
        "%s, %s, '', '', '{}')",
        [first.grounding_id, world.dimension.name],
    )
    problems = _verify(world).problems
    assert [(p.finding, p.table) for p in problems] == [("audit", "policies_auditevent")]


def test_a_re_signed_rewritten_log_is_told_by_an_earlier_checkpoint(world, written):
    """Someone with the database and the signing key rewrites a history row, its
    commitment, the leaf, the tree and every checkpoint: the log verifies by itself,
    and not against a checkpoint saved before."""
    first, _ = written
    log = Log.objects.get(dimension=world.dimension)
    earlier = log.checkpoint
    row = _history_id(first, 1)
    _sql(
        "UPDATE grounding_historicalgroundinglink SET owner_ref = 'mallory' WHERE history_id = %s",
        [row],
    )
    _rewrite_everything(log)
    assert _verify(world).ok  # the rewrite is consistent in itself
    report = _verify(world, since=earlier)
    problem = report.first()
    assert (problem.finding, problem.index) == ("consistency", 2)
    assert "do not hash to the checkpoint's root" in problem.detail


def _rewrite_everything(log: Log) -> None:
    """The attacker: every commitment recomputed with the stored keys (pgcrypto), the
    leaves, the nodes, the root and the checkpoints rebuilt and signed again."""
    from transparency import commitments as made
    from transparency import tables

    leaves = list(Leaf.objects.filter(log=log).order_by("index"))
    for leaf in leaves:
        commitments = []
        for c, key_id in zip(leaf.commitments, leaf.key_ids, strict=True):
            spec = tables.get(c["table"])
            expression = made.canonical_expression(connection, spec, "h")
            with connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT encode(hmac({expression}, k.key, 'sha256'), 'base64') "
                    f'FROM "{spec.table}" h, transparency_recordkey k '
                    f'WHERE h."{spec.pk}"::text = %s AND k.id = %s',
                    [c["row"], key_id],
                )
                commitments.append({**c, "hmac": cursor.fetchone()[0]})
        data = sequencer.leaf_bytes(
            dimension=log.dimension.name, index=leaf.index, action=leaf.action,
            grounding_id=leaf.grounding_id, revision=leaf.revision, actor_ref=leaf.actor_ref,
            at=leaf.at, audit_event=leaf.audit_event, commitments=commitments,
        )  # fmt: skip
        Leaf.objects.filter(pk=leaf.pk).update(
            commitments=commitments, leaf=data, leaf_hash=merkle.leaf_hash(data)
        )
    hashes = [
        merkle.leaf_hash(bytes(x.leaf)) for x in Leaf.objects.filter(log=log).order_by("index")
    ]
    Node.objects.filter(log=log).delete()
    edge, created = merkle.append([], 0, hashes)
    Node.objects.bulk_create([Node(log=log, level=n[0], position=n[1], hash=h) for n, h in created])
    root = merkle.root_of(edge)
    for checkpoint in Checkpoint.objects.filter(log=log):
        size_root = merkle.range_hash(0, checkpoint.size, dict(created))
        Checkpoint.objects.filter(pk=checkpoint.pk).update(
            root_hash=size_root,
            note=notes.sign_checkpoint(log.dimension.name, checkpoint.size, size_root),
        )
    note = notes.sign_checkpoint(log.dimension.name, len(hashes), root)
    Log.objects.filter(pk=log.pk).update(root_hash=root, checkpoint=note)


def test_an_updated_interior_node_is_reported(world, written):
    _sql("UPDATE transparency_node SET hash = sha256(hash) WHERE level = 1 AND position = 0")
    problem = _verify(world).first()
    assert problem.finding == "tree" and problem.index == 0
    assert problem.detail == "the stored node 1/0 is not the hash of leaves 0..1"


def test_a_key_destroyed_outside_a_disposal_is_reported(world, written):
    first, _ = written
    _sql(
        "UPDATE transparency_recordkey SET key = NULL, destroyed_at = now() WHERE subject = %s",
        [f"link:{first.grounding_id}"],
    )
    report = _verify(world)
    assert report.withheld == 4  # the first link's three rows at 0, its revision's at 2
    assert [(p.finding, p.detail) for p in report.problems] == [
        ("key_destroyed", f"the key of link:{first.grounding_id} was destroyed, and no "
         "disposal in the log records it"),
    ]  # fmt: skip
