"""The log against a real server (gunicorn on this run's PostgreSQL database): the
inline sequencer signs a checkpoint covering a committed write within a second, and
tools/verify_checkpoint.py (hashlib, urllib and cryptography only) verifies the
checkpoint's signature and a leaf's inclusion from outside, and fails on a tampered
leaf."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
import requests
from django.db import connection

from tests import factories
from tests.conftest import requires_postgres
from tests.ops.live import PROJECT, database_url, gunicorn
from transparency import notes

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]


def _script(base: str, token: str, dimension: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(PROJECT / "tools" / "verify_checkpoint.py"), "--base", base,
         "--token", token, "--dimension", dimension,
         "--public-key", notes.signer().verifier_key, *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_served_checkpoint_covers_a_write_within_a_second_and_verifies(world, tmp_path):
    token = factories.token_for(world.curator)
    name = world.dimension.name
    headers = {"Authorization": f"Token {token}"}
    with gunicorn(database_url(), GROUNDING_LOG_SEQUENCER="inline") as base:
        lags = []
        for n in range(3):
            body = factories.link_payload(world.dimension, world.profile, world.passage)
            created = requests.post(f"{base}/api/v1/groundings/", json=body, headers=headers)
            assert created.status_code == 201, created.text
            committed = time.monotonic()
            while True:
                note = requests.get(
                    f"{base}/api/v1/log/checkpoint", params={"dimension": name}, headers=headers
                ).text
                if note.split("\n")[1] == str(n + 1):
                    break
                assert time.monotonic() - committed < 1.0, note
                time.sleep(0.02)
            lags.append(time.monotonic() - committed)
            if n == 0:
                (tmp_path / "first.txt").write_text(note)
        assert max(lags) < 1.0

        link = created.json()["grounding_id"]
        ok = _script(base, token, name, "--since", str(tmp_path / "first.txt"))
        assert ok.returncode == 0, ok.stdout + ok.stderr
        assert ok.stdout.startswith(f"OK localhost/grounding/{name}: checkpoint of 3 signed")
        assert "consistent with the earlier checkpoint of 1" in ok.stdout
        by_revision = _script(base, token, name, "--grounding-id", link, "--revision", "1")
        assert by_revision.returncode == 0, by_revision.stdout
        assert "leaf 2 (register) included" in by_revision.stdout

        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE transparency_leaf SET leaf = convert_to(replace(convert_from(leaf, "
                "'UTF8'), 'register', 'registre'), 'UTF8') WHERE \"index\" = 1"
            )
        tampered = _script(base, token, name, "--index", "1")
        assert tampered.returncode == 1
        assert tampered.stdout == (
            "FAILED: the inclusion proof does not lead to the checkpoint's root\n"
        )
        # A key other than the operator's: the checkpoint is not trusted.
        other = notes._signer("AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=", notes.key_name())
        foreign = subprocess.run(
            [sys.executable, str(PROJECT / "tools" / "verify_checkpoint.py"), "--base", base,
             "--token", token, "--dimension", name, "--public-key", other.verifier_key],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert foreign.returncode == 1
        assert "signature" in foreign.stdout
