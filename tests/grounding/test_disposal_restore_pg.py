"""A restore to before a disposal, on PostgreSQL with pg_dump and psql: the restored
database holds the text again until `manage.py reapply_disposals` (a process of its
own, against the restored database) applies the journaled disposal; then the text is
in no row and not in a dump, the log verifies, and a second run applies nothing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.db import connection

from grounding import services
from tests import factories
from tests.conftest import requires_postgres
from tests.transparency.test_drills_dump import ROOT, _dump, _pg, _restored
from transparency import sequencer

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]
MARK = "K4W8J"


def _manage(database: str, journal, *args: str) -> subprocess.CompletedProcess:
    s = connection.settings_dict
    url = f"postgres://{s['USER']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{database}"
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": url, "GROUNDING_DISPOSAL_JOURNAL": str(journal)},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_restored_dump_gets_its_disposal_again(world, settings, tmp_path):
    journal = tmp_path / "disposals.jsonl"
    settings.GROUNDING_DISPOSAL_JOURNAL = str(journal)
    passage = factories.make_passage(
        f"The lighthouse {MARK} was lit at dusk.", dimension=world.dimension,
        title=f"Lighthouse {MARK}",
    )  # fmt: skip
    anchor = {
        "source_selector": {"type": "TextQuoteSelector", "exact": f"lighthouse {MARK} was"},
        "selector_profile": "nfc-codepoint-halfopen@1",
    }
    link = services.register(
        actor=world.curator,
        payload=factories.link_payload(world.dimension, world.profile, passage, anchor=anchor),
    )
    sequencer.integrate()
    before = _dump()  # the backup: before the disposal
    services.dispose(
        actor=world.access_steward,
        grounding_id=link.pk,
        expected_revision=1,
        disposal={"receipt_ref": "urn:storage:receipt:pg1", "policy_ref": "urn:policy:ret@1"},
    )
    sequencer.integrate()
    assert MARK not in _dump()
    assert journal.read_text().count('"state": "committed"') == 1
    assert MARK not in journal.read_text()

    with _restored(before) as database:
        dump = _pg("pg_dump", "--no-owner", database=database).stdout.decode()
        assert MARK in dump  # the restore brought the text back
        first = _manage(database, journal, "reapply_disposals", "--journal", str(journal))
        assert first.returncode == 0, first.stdout + first.stderr
        assert "disposals: 1 journaled, 0 already applied, 0 of links the database does " \
            "not hold, reapplied 1, 0 failed" in first.stdout  # fmt: skip
        dump = _pg("pg_dump", "--no-owner", database=database).stdout.decode()
        assert MARK not in dump
        again = _manage(database, journal, "reapply_disposals", "--journal", str(journal))
        assert again.returncode == 0, again.stdout + again.stderr
        assert "1 already applied" in again.stdout and "reapplied 0" in again.stdout
        assert _manage(database, journal, "run_sequencer", "--once").returncode == 0
        verified = _manage(database, journal, "verify_log", "--dimension", world.dimension.name)
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert verified.stdout.strip().endswith("OK")
    # The live database's disposal and the restored one's, both journaled.
    assert journal.read_text().count('"state": "committed"') == 2
