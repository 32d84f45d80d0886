"""/readyz refuses (503, "disposals": "pending") while the disposal journal holds a
disposal the database lacks (a restore to an earlier point), and is ready once
`reapply_disposals` has applied it. A separate process, its own database file and
journal, its settings from the environment as a served process reads them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings

_PROBE = """
import json, sys
import django
django.setup()
from django.core.management import call_command
from django.test import Client
call_command("migrate", verbosity=0)
from grounding.services import disposal_journal
from policies.choices import Role
from tests import factories
dimension, profile = factories.make_dimension(), factories.make_profile()
curator = factories.user_with_roles(dimension, Role.CURATOR)
steward = factories.user_with_roles(dimension, Role.ACCESS_STEWARD)
passage = factories.make_passage(dimension=dimension)
link = factories.register_link(curator, dimension, profile, passage)
client, answers = Client(), []
answers.append(client.get("/readyz").json())
# What a later point of the database did, and the restored one lacks.
disposal_journal.append(disposal_journal.journal_path(), {
    "disposal_id": "01a2-later", "dimension": dimension.name, "grounding_id": str(link.pk),
    "revision": 2, "disposed_at": "2026-12-06T12:00:00+00:00",
    "actor_ref": f"user:{steward.username}", "receipt_ref": "urn:storage:receipt:r1",
    "policy_ref": "urn:policy:ret@1", "state": "committed"})
response = client.get("/readyz")
answers.append([response.status_code, response.json()])
call_command("reapply_disposals", verbosity=0, stdout=sys.stderr)
response = client.get("/readyz")
answers.append([response.status_code, response.json()])
print(json.dumps(answers))
"""


def test_readyz_waits_for_the_journaled_disposals(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="grounding.project.settings",
        DJANGO_SECRET_KEY="test-only-" + "x" * 40,
        DJANGO_ALLOWED_HOSTS="testserver",
        DATABASE_URL=f"sqlite:///{tmp_path / 'restored.sqlite3'}",
        GROUNDING_LOG_SIGNING_KEY="AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=",
        GROUNDING_DISPOSAL_JOURNAL=str(tmp_path / "disposals.jsonl"),
    )
    result = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=Path(settings.BASE_DIR),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    before, pending, after = json.loads(result.stdout.strip().splitlines()[-1])
    assert before["checks"]["disposals"] == "ok"
    assert pending == [503, {"status": "unavailable", "checks": {
        "database": "ok", "migrations": "ok", "disposals": "pending"}}]  # fmt: skip
    assert after == [200, {"status": "ok", "checks": {
        "database": "ok", "migrations": "ok", "disposals": "ok"}}]  # fmt: skip
