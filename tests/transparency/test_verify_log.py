"""manage.py verify_log over a log the real writes made (both databases)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from grounding import services
from tests import factories
from transparency import sequencer
from transparency.models import Log
from transparency.verifier import verify


def _writes(world) -> list:
    """A register, a bulk of two, a revision, an assessment, a withdrawal."""
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    services.register_many(
        actor=world.curator,
        items=[factories.link_payload(world.dimension, world.profile, world.passage)] * 2,
    )
    services.revise(
        actor=world.curator,
        grounding_id=link.grounding_id,
        expected_revision=1,
        changes={"revision_reason": "scope", "support": {"support_scope": {"covers": "year"}}},
    )
    services.bind_assessment(
        actor=world.reviewer,
        grounding_id=link.grounding_id,
        expected_revision=2,
        assessment=factories.assessment_body(2),
    )
    services.withdraw(
        actor=world.curator,
        grounding_id=link.grounding_id,
        expected_revision=3,
        withdrawal={"reason": "superseded", "authority_ref": "urn:policy:w@1"},
    )
    return [link]


def run(*args: str) -> tuple[int, dict]:
    out = StringIO()
    try:
        call_command("verify_log", *args, "--json", stdout=out)
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    return code, json.loads(out.getvalue())


def test_a_log_of_real_writes_verifies(world):
    _writes(world)
    assert sequencer.integrate() == 6
    code, report = run("--dimension", world.dimension.name)
    assert code == 0, report["problems"]
    assert (report["size"], report["leaves"], report["pending"]) == (6, 6, 0)
    # Register: 3 history rows and the audit row, and the fixture's passage and source
    # history rows written before it in the same (test) transaction; bulk 2×4; revise:
    # link history and audit (support scope only); assessment: record, link history,
    # audit; withdrawal: record, link history, audit.
    assert report["commitments"] == 6 + 8 + 2 + 3 + 3
    assert report["withheld_by_disposal"] == 0
    assert report["ok"] is True and report["problems"] == []


def test_the_commitments_cover_each_write_s_rows(world):
    link = _writes(world)[0]
    sequencer.integrate()
    from transparency.models import Leaf

    by_action = {
        leaf.action: sorted(c["table"] for c in leaf.commitments)
        for leaf in Leaf.objects.filter(grounding_id=link.grounding_id)
    }
    assert by_action["bind_assessment"] == [
        "grounding_assessment", "grounding_historicalgroundinglink", "policies_auditevent",
    ]  # fmt: skip
    assert by_action["withdraw"] == [
        "grounding_historicalgroundinglink", "grounding_withdrawal", "policies_auditevent",
    ]  # fmt: skip


def test_since_an_earlier_checkpoint_the_log_extends_it(world, tmp_path):
    _writes(world)
    sequencer.integrate()
    earlier = tmp_path / "checkpoint.txt"
    earlier.write_text(Log.objects.get(dimension=world.dimension).checkpoint)
    factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    sequencer.integrate()
    code, report = run("--dimension", world.dimension.name, "--since", str(earlier))
    assert code == 0, report["problems"]
    assert report["size"] == 7


def test_a_checkpoint_from_a_longer_log_says_this_one_is_behind(world, tmp_path):
    _writes(world)
    sequencer.integrate()
    log = Log.objects.get(dimension=world.dimension)
    from transparency import notes

    later = notes.sign_checkpoint(world.dimension.name, 9, bytes(32))
    (tmp_path / "later.txt").write_text(later)
    code, report = run("--dimension", world.dimension.name, "--since", str(tmp_path / "later.txt"))
    assert code == 4  # behind, not proved (tests/transparency/test_verify_behind.py)
    assert report["problems"] == []
    assert report["behind_by"] == 3
    assert report["behind"].startswith("the checkpoint is of 9 leaves, this log holds 6")
    assert log.size == 6


def test_a_checkpoint_signed_by_another_key_is_refused(world, tmp_path):
    _writes(world)
    sequencer.integrate()
    from transparency import notes

    note = Log.objects.get(dimension=world.dimension).checkpoint
    other = notes._signer("AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=", notes.key_name())
    forged = other.sign(note.split("\n\n")[0] + "\n")
    report = verify(world.dimension.name, verifier_key=notes.signer().verifier_key, since=forged)
    assert [p.finding for p in report.problems] == ["signature"]


@pytest.mark.django_db
def test_an_unknown_dimension_is_an_error():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no log of a Dimension named 'nope'"):
        call_command("verify_log", "--dimension", "nope")
