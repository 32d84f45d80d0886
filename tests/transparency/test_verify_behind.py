"""verify_log against a checkpoint kept outside the database, of a longer log: the
database restored to an earlier point is BEHIND it by N leaves (exit 3 with the
consistency proof, 4 without), never OK; a log that is not the checkpoint's prefix is
REWRITTEN (exit 1). The later log is real (the project's services and sequencer),
then rolled back: the database is exactly its earlier state, as a restore leaves it."""

from __future__ import annotations

import json
from contextlib import contextmanager
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction

from tests import factories
from transparency import proofs, sequencer
from transparency.models import Log


@contextmanager
def _rolled_back():
    """The block's writes rolled back (a savepoint: the registry's entries each open a
    durable transaction): the database returns to its earlier point."""
    point = transaction.savepoint()
    try:
        yield
    finally:
        transaction.savepoint_rollback(point)


def _register(world, count: int) -> None:
    for _ in range(count):
        factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    sequencer.integrate()


def _later(world, tmp_path, count: int, first: int) -> tuple[str, str]:
    """Write `count` more links, keep the later checkpoint and the consistency proof
    from `first` leaves to it in files, and roll the writes back."""
    checkpoint, proof = tmp_path / "later.txt", tmp_path / "proof.json"
    with _rolled_back():
        _register(world, count)
        log = Log.objects.get(dimension=world.dimension)
        checkpoint.write_text(log.checkpoint)
        proof.write_text(json.dumps(proofs.consistency(log, first, log.size)))
    return str(checkpoint), str(proof)


def run(*args: str) -> tuple[int, dict, str]:
    out, text = StringIO(), StringIO()
    codes = []
    for stream, extra in ((out, ("--json",)), (text, ())):
        try:
            call_command("verify_log", *args, *extra, stdout=stream)
            codes.append(0)
        except SystemExit as exit_:
            codes.append(exit_.code)
    assert codes[0] == codes[1]
    return codes[0], json.loads(out.getvalue()), text.getvalue()


def test_a_restored_log_is_behind_the_later_checkpoint_by_n_leaves(world, tmp_path):
    _register(world, 3)
    checkpoint, proof = _later(world, tmp_path, 2, first=3)
    assert Log.objects.get(dimension=world.dimension).size == 3  # the restored point
    name = world.dimension.name

    code, report, text = run("--dimension", name, "--checkpoint", checkpoint,
                             "--consistency-proof", proof)  # fmt: skip
    assert code == 3
    assert (report["behind_by"], report["behind_proved"], report["ok"]) == (2, True, False)
    assert report["problems"] == [] and report["rewritten"] is False
    assert "BEHIND by 2 leaves: the checkpoint is of 5 leaves, this log holds 3" in text
    assert "the consistency proof from 3 to 5 verifies" in text
    assert "OK" not in text.splitlines() and "REWRITTEN" not in text

    code, report, text = run("--dimension", name, "--checkpoint", checkpoint)
    assert code == 4
    assert (report["behind_by"], report["behind_proved"]) == (2, False)
    assert "BEHIND by 2 leaves (not proved): the checkpoint is of 5 leaves" in text
    assert "no consistency proof from 3 to 5 leaves was given" in text

    # Its own last checkpoint, kept outside too, verifies: OK.
    own = tmp_path / "own.txt"
    own.write_text(Log.objects.get(dimension=world.dimension).checkpoint)
    assert run("--dimension", name, "--checkpoint", str(own))[0] == 0


def test_a_log_forked_after_the_restore_point_is_rewritten(world, tmp_path):
    """The database holds 3 leaves as the later log's first 3 were not: the proof
    does not verify. Without the proof only BEHIND, not proved, can be said."""
    _register(world, 2)
    with _rolled_back():
        _register(world, 1)
        checkpoint, proof = _later(world, tmp_path, 2, first=3)
    _register(world, 1)  # another third leaf: a log of 3 that the checkpoint's tree is not
    name = world.dimension.name

    code, report, text = run("--dimension", name, "--checkpoint", checkpoint,
                             "--consistency-proof", proof)  # fmt: skip
    assert code == 1
    assert report["rewritten"] is True and report["behind"] == "" and report["behind_by"] == 0
    assert report["problems"] == [
        "index 2: consistency: the consistency proof from 3 to 5 leaves does not verify: "
        "this log's 3 leaves are not a prefix of the checkpoint's tree: the log was rewritten"
    ]
    assert "REWRITTEN: the consistency proof from 3 to 5 leaves does not verify" in text
    assert "BEHIND" not in text and "OK" not in text.splitlines()

    code, report, _ = run("--dimension", name, "--checkpoint", checkpoint)
    assert (code, report["behind_proved"]) == (4, False)  # honest: not proved either way


def test_a_log_longer_than_the_checkpoint_but_forked_is_rewritten(world, tmp_path):
    _register(world, 2)
    checkpoint, _ = _later(world, tmp_path, 2, first=2)
    _register(world, 3)  # 5 leaves, the last 3 not the checkpoint's
    code, report, text = run("--dimension", world.dimension.name, "--checkpoint", checkpoint)
    assert code == 1 and report["rewritten"] is True
    assert "REWRITTEN: the first 4 leaves do not hash to the checkpoint's root" in text


def test_a_tampered_restored_log_is_never_behind(world, tmp_path):
    _register(world, 3)
    checkpoint, proof = _later(world, tmp_path, 2, first=3)
    from transparency.models import Leaf

    leaf = Leaf.objects.get(log__dimension=world.dimension, index=1)
    Leaf.objects.filter(pk=leaf.pk).update(leaf=bytes(leaf.leaf).replace(b"register", b"registre"))
    code, report, text = run("--dimension", world.dimension.name, "--checkpoint", checkpoint,
                             "--consistency-proof", proof)  # fmt: skip
    assert code == 1
    assert report["problems"][0].startswith("index 1: leaf_hash")
    assert report["behind"] == "" and "BEHIND" not in text


def test_a_proof_of_other_sizes_is_named(world, tmp_path):
    _register(world, 3)
    checkpoint, proof = _later(world, tmp_path, 2, first=2)
    code, report, _ = run("--dimension", world.dimension.name, "--checkpoint", checkpoint,
                          "--consistency-proof", proof)  # fmt: skip
    assert code == 1
    assert report["problems"] == [
        "log: consistency: the consistency proof is from 2 to 5 leaves; this log holds 3 "
        "and the checkpoint is of 5: give the proof of those sizes"
    ]


def test_a_proof_that_is_not_one_is_an_error(world, tmp_path):
    _register(world, 1)
    checkpoint, _ = _later(world, tmp_path, 1, first=1)
    bad = tmp_path / "bad.json"
    bad.write_text('{"first": 1, "second": 2, "hashes": ["not base64!"]}')
    with pytest.raises(CommandError, match="is not a consistency proof"):
        call_command("verify_log", "--dimension", world.dimension.name,
                     "--checkpoint", checkpoint, "--consistency-proof", str(bad))  # fmt: skip
    with pytest.raises(CommandError, match="--consistency-proof goes with --checkpoint"):
        call_command("verify_log", "--dimension", world.dimension.name,
                     "--consistency-proof", str(bad))  # fmt: skip
