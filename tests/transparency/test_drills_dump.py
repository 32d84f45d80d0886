"""Disposal and restore drills on PostgreSQL, with pg_dump and psql (issue #28): the
text leaves every row and the dump while every proof stays valid; a restored dump
verifies against the last checkpoint it holds, and an older one is told from a
rewritten one."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import subprocess
import sys
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import connection

from evidence.models import Content, Passage
from grounding import services
from grounding.models import PassageBinding
from tests import factories
from tests.conftest import requires_postgres
from transparency import commitments, merkle, proofs, sequencer, tables
from transparency.models import Leaf, Log, RecordKey
from transparency.verifier import parse_note, verify_consistency, verify_inclusion

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]
MARK = "Q7X9Z"


def _pg(program: str, *args: str, database: str | None = None, **kwargs):
    settings = connection.settings_dict
    command = [program, "-h", settings["HOST"] or "127.0.0.1", "-p", str(settings["PORT"] or 5432),
               "-U", settings["USER"] or "postgres", *args]  # fmt: skip
    if database:
        command += ["-d", database]
    env = {**os.environ, "PGPASSWORD": settings.get("PASSWORD") or ""}
    return subprocess.run(command, env=env, check=True, capture_output=True, **kwargs)


def _dump() -> str:
    return _pg("pg_dump", "--no-owner", database=connection.settings_dict["NAME"]).stdout.decode()


@contextmanager
def _restored(dump: str):
    """A scratch database restored from `dump`, dropped afterwards."""
    name = f"{connection.settings_dict['NAME']}_r{uuid.uuid4().hex[:8]}"
    _pg("createdb", name)
    try:
        _pg("psql", "-q", "-v", "ON_ERROR_STOP=1", database=name, input=dump.encode())
        yield name
    finally:
        _pg("dropdb", "--force", name)


def _verify_log(database: str, *args: str) -> subprocess.CompletedProcess:
    s = connection.settings_dict
    url = f"postgres://{s['USER']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{database}"
    return subprocess.run(
        [sys.executable, "manage.py", "verify_log", *args],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": url},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _b(text: str) -> bytes:
    return base64.b64decode(text)


def test_disposal_purges_the_text_and_keeps_every_proof(world):
    passage = factories.make_passage(
        f"The ferry {MARK} crossed the strait at dawn.", dimension=world.dimension,
        title=f"Ferry {MARK}",
    )  # fmt: skip
    anchor = {
        "source_selector": {"type": "TextQuoteSelector", "exact": f"ferry {MARK} crossed",
                            "prefix": "The ", "suffix": " the"},
        "selector_profile": "nfc-codepoint-halfopen@1",
    }  # fmt: skip
    link = services.register(
        actor=world.curator,
        payload=factories.link_payload(world.dimension, world.profile, passage, anchor=anchor),
    )
    factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    sequencer.integrate()
    log = Log.objects.get(dimension=world.dimension)
    before = parse_note(log.checkpoint)
    leaf = Leaf.objects.get(grounding_id=link.grounding_id, revision=1)
    old_proof = proofs.inclusion_hashes(log, leaf.index, before.size)
    assert MARK in _dump()

    # What a guesser would rebuild: the committed binding row exactly as it was stored.
    binding = next(
        c for c in leaf.commitments if c["table"] == "grounding_historicalpassagebinding"
    )
    spec = tables.get(binding["table"])
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {commitments.canonical_expression(connection, spec, 'h')} "
            f'FROM "{spec.table}" h WHERE h.history_id = %s',
            [int(binding["row"])],
        )
        guessed = bytes(cursor.fetchone()[0])

    services.dispose(
        actor=world.access_steward,
        grounding_id=link.grounding_id,
        expected_revision=1,
        disposal={"receipt_ref": "urn:receipt:ferry", "policy_ref": "urn:policy:retention@1"},
    )
    sequencer.integrate()
    log.refresh_from_db()
    after = parse_note(log.checkpoint)
    assert after.size == before.size + 1

    # The text is gone from every row and from a dump of the database.
    assert not Content.objects.filter(text__contains=MARK).exists()
    assert not Passage.objects.filter(title__contains=MARK).exists()
    assert all(MARK not in str(b.source_selector) for b in PassageBinding.objects.filter(link=link))
    assert MARK not in _dump()

    # The leaf is as it was: the old proof verifies against the old checkpoint, a new
    # one against the new, and the new tree extends the old.
    leaf.refresh_from_db()
    digest = merkle.leaf_hash(bytes(leaf.leaf))
    assert verify_inclusion(digest, leaf.index, before.size, old_proof, before.root)
    new_proof = proofs.inclusion_hashes(log, leaf.index, after.size)
    assert verify_inclusion(digest, leaf.index, after.size, new_proof, after.root)
    consistency = proofs.consistency(log, before.size, after.size)
    hashes = [_b(h) for h in consistency["hashes"]]
    assert verify_consistency(before.size, after.size, hashes, before.root, after.root)

    # The link's key is destroyed: the old row, guessed exactly, is confirmed by no key.
    destroyed = RecordKey.objects.get(
        subject=f"link:{link.grounding_id}", destroyed_at__isnull=False
    )
    assert destroyed.key is None and destroyed.destroyed_by is not None
    assert destroyed.pk == leaf.key_ids[leaf.commitments.index(binding)]
    for key in RecordKey.objects.exclude(key=None):
        made = base64.b64encode(hmac.new(bytes(key.key), guessed, hashlib.sha256).digest())
        assert made.decode() != binding["hmac"]

    # verify_log: everything holds; the disposed link's old commitments are withheld.
    result = _verify_log(connection.settings_dict["NAME"], "--dimension", world.dimension.name)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK" in result.stdout
    withheld = int(result.stdout.split("commitments (")[1].split(" withheld")[0])
    # The link's three rows at registration (the fixture's passage was written by a
    # transaction of its own, no write of the registry: no leaf commits to it).
    assert withheld == 3


def test_restored_dumps_verify_and_an_older_one_is_told_from_a_rewrite(world, tmp_path):
    name = world.dimension.name
    for _ in range(2):
        factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    sequencer.integrate()
    first = Log.objects.get(dimension=world.dimension).checkpoint
    older = _dump()
    factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    sequencer.integrate()
    second = Log.objects.get(dimension=world.dimension).checkpoint
    newer = _dump()
    (tmp_path / "first.txt").write_text(first)
    (tmp_path / "second.txt").write_text(second)
    log = Log.objects.get(dimension=world.dimension)
    (tmp_path / "proof.json").write_text(json.dumps(proofs.consistency(log, 2, 3)))

    with _restored(older) as database:
        own = _verify_log(database, "--dimension", name)
        assert own.returncode == 0, own.stdout + own.stderr  # its own last checkpoint
        behind = _verify_log(database, "--dimension", name, "--since", str(tmp_path / "second.txt"))
        assert behind.returncode == 4  # behind, not proved: no consistency proof given
        assert (
            "BEHIND by 1 leaves (not proved): the checkpoint is of 3 leaves, this log "
            "holds 2" in behind.stdout
        )
        assert "FIRST DISAGREEMENT" not in behind.stdout
        proved = _verify_log(database, "--dimension", name, "--checkpoint",
                             str(tmp_path / "second.txt"), "--consistency-proof",
                             str(tmp_path / "proof.json"))  # fmt: skip
        assert proved.returncode == 3, proved.stdout + proved.stderr
        assert (
            "BEHIND by 1 leaves: the checkpoint is of 3 leaves, this log holds 2" in proved.stdout
        )

    with _restored(newer) as database:
        since = _verify_log(database, "--dimension", name, "--since", str(tmp_path / "first.txt"))
        assert since.returncode == 0, since.stdout + since.stderr
        # Rewritten: a leaf of the restored log changed; told apart from an older state.
        _pg("psql", "-q", "-c",
            "UPDATE transparency_leaf SET leaf = convert_to(replace(convert_from(leaf, 'UTF8'), "
            "'register', 'registre'), 'UTF8') WHERE \"index\" = 0", database=database)  # fmt: skip
        rewritten = _verify_log(
            database, "--dimension", name, "--since", str(tmp_path / "first.txt")
        )
        assert rewritten.returncode == 1
        assert "FIRST DISAGREEMENT: index 0: leaf_hash" in rewritten.stdout
        assert "BEHIND" not in rewritten.stdout
