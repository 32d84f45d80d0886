"""Disposals survive a restore (API.md "Surviving a lost server"): each disposal is
journaled outside the database, and `reapply_disposals` applies again, through the
disposal's own entry, those a restored database lacks.

The restore is a real rollback: the disposal runs in a savepoint and is rolled back
after its journal lines were written (its commit callbacks run first), so the
database is exactly its state before the disposal, the journal what a later point
wrote."""

from __future__ import annotations

import json
from contextlib import contextmanager
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import transaction
from hypothesis import given
from hypothesis import settings as settings_
from hypothesis import strategies as st

from evidence.models import Passage
from evidence.services.wsp_import import import_wsp_document
from grounding import services
from grounding.choices import RecordState
from grounding.management.demo_data import DOCUMENTS, demo_wsp_response
from grounding.models import GroundingLink
from grounding.services import disposal_journal
from policies.models import AuditEvent
from tests import factories
from tests.api.helpers import client_for, url
from transparency import sequencer
from transparency.models import Leaf

DISPOSAL = {"receipt_ref": "urn:storage:receipt:j1", "policy_ref": "urn:policy:ret@1"}
_, TITLE, TEXT = DOCUMENTS[0]
QUOTE = "steel arch"


@pytest.fixture
def journal(settings, tmp_path):
    path = tmp_path / "disposals.jsonl"
    settings.GROUNDING_DISPOSAL_JOURNAL = str(path)
    disposal_journal._read_to.clear()
    yield path
    disposal_journal._read_to.clear()


def _bound_link(world) -> GroundingLink:
    """A link binding an imported passage, quoting it: text to purge."""
    import_wsp_document(
        actor=world.curator, document=demo_wsp_response(), dimension=world.dimension
    )
    passage = Passage.objects.get(dimension=world.dimension, observation_id="att-demo-1:0")
    payload = factories.link_payload(world.dimension, world.profile, passage)
    payload["anchor"]["source_selector"] = {"type": "TextQuoteSelector", "exact": QUOTE}
    return services.register(actor=world.curator, payload=payload)


def _dispose(world, link, capture, *, committed: bool = True):
    with capture(execute=committed):
        return services.dispose(
            actor=world.access_steward,
            grounding_id=link.pk,
            expected_revision=link.revision,
            disposal=DISPOSAL,
        )


@contextmanager
def _restored_to_before():
    """The block's writes rolled back: the database as a restore to before it leaves
    it (the entries open durable transactions: a savepoint, not an atomic block)."""
    point = transaction.savepoint()
    try:
        yield
    finally:
        transaction.savepoint_rollback(point)


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def reapply(*args: str) -> tuple[int, dict]:
    out = StringIO()
    try:
        call_command("reapply_disposals", *args, "--json", stdout=out)
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    return code, json.loads(out.getvalue())


def _readable(world, link) -> str:
    """What the API shows of the link to its curator (the reader's answer)."""
    response = client_for(world.curator).get(url(link.pk))
    assert response.status_code == 200
    return response.content.decode()


def test_a_disposal_is_journaled_before_and_after_its_commit_without_text(
    world, journal, django_capture_on_commit_callbacks
):
    link = _bound_link(world)
    record = _dispose(world, link, django_capture_on_commit_callbacks)
    intent, committed = _lines(journal)
    expected = {
        "disposal_id": str(record.disposal_id),
        "dimension": world.dimension.name,
        "grounding_id": str(link.pk),
        "revision": 2,
        "disposed_at": record.recorded_at.isoformat(),
        "actor_ref": f"user:{world.access_steward.username}",
        "receipt_ref": DISPOSAL["receipt_ref"],
        "policy_ref": DISPOSAL["policy_ref"],
    }
    assert {k: v for k, v in intent.items() if k != "written_at"} == {
        **expected,
        "state": "intent",
    }
    assert {k: v for k, v in committed.items() if k != "written_at"} == {
        **expected,
        "state": "committed",
    }
    text = journal.read_text()
    assert QUOTE not in text and TEXT[:40] not in text and TITLE not in text
    assert disposal_journal.readiness() == "ok"


def test_a_restored_database_gets_its_disposals_again_before_it_serves(
    world, journal, django_capture_on_commit_callbacks
):
    link = _bound_link(world)
    with _restored_to_before():
        original = _dispose(world, link, django_capture_on_commit_callbacks)
        original_id = str(original.disposal_id)
    # The restored database: the link and its text are back, the journal remembers.
    link.refresh_from_db()
    assert link.record_state != RecordState.DISPOSED
    assert QUOTE in _readable(world, link)
    assert disposal_journal.readiness() == "pending"

    with django_capture_on_commit_callbacks(execute=True):
        code, counts = reapply("--journal", str(journal))
    assert code == 0
    assert {k: counts[k] for k in ("journaled", "reapplied", "already_applied", "failed")} == {
        "journaled": 1,
        "reapplied": 1,
        "already_applied": 0,
        "failed": 0,
    }
    assert counts["reapplied_ids"] == [str(link.pk)]

    link.refresh_from_db()
    assert link.record_state == RecordState.DISPOSED and link.revision == 2
    shown = _readable(world, link)
    assert QUOTE not in shown and TEXT[:40] not in shown
    passage = Passage.objects.get(dimension=world.dimension, observation_id="att-demo-1:0")
    assert (passage.text, passage.title) == (None, None)
    # Its history row, its audit event (naming the journaled disposal), its leaf.
    latest = link.history.order_by("-history_id").first()
    assert (latest.revision, latest.history_change_reason) == (
        2,
        "disposed under a recorded receipt",
    )
    event = AuditEvent.objects.get(action="dispose", grounding_id=link.pk, outcome="applied")
    assert event.actor_ref == f"user:{world.access_steward.username}"
    assert event.references == {
        "receipt_ref": DISPOSAL["receipt_ref"],
        "reapplies_disposal": original_id,
        "disposed_at": original.recorded_at.isoformat(),
        "disposed_by": f"user:{world.access_steward.username}",
    }
    sequencer.integrate()
    assert Leaf.objects.filter(grounding_id=link.pk, action="dispose").count() == 1
    assert disposal_journal.readiness() == "ok"
    # Journaled again (its new id); a second run applies nothing.
    assert [e["state"] for e in _lines(journal)] == ["intent", "committed"] * 2
    code, counts = reapply("--journal", str(journal))
    assert (code, counts["reapplied"], counts["already_applied"]) == (0, 0, 1)
    assert AuditEvent.objects.filter(action="dispose", outcome="applied").count() == 1


def test_a_link_the_restored_database_never_held_has_nothing_to_reapply(
    world, journal, django_capture_on_commit_callbacks
):
    with _restored_to_before():
        link = _bound_link(world)
        _dispose(world, link, django_capture_on_commit_callbacks)
    assert not GroundingLink.objects.filter(pk=link.pk).exists()
    assert disposal_journal.readiness() == "ok"
    code, counts = reapply("--journal", str(journal))
    assert (code, counts["link_absent"], counts["reapplied"]) == (0, 1, 0)


def test_an_intent_with_no_commit_line_is_confirmed_or_named(
    world, journal, django_capture_on_commit_callbacks
):
    """The process died between the commit and the journal's committed line."""
    held, lost = (
        _bound_link(world),
        factories.register_link(world.curator, world.dimension, world.profile, world.passage),
    )
    _dispose(world, held, django_capture_on_commit_callbacks, committed=False)
    with _restored_to_before():
        _dispose(world, lost, django_capture_on_commit_callbacks, committed=False)
    assert [e["state"] for e in _lines(journal)] == ["intent", "intent"]
    assert disposal_journal.readiness() == "ok"  # no committed disposal is lacking

    code, counts = reapply("--journal", str(journal), "--dry-run")
    assert (code, counts["confirmed"], counts["unconfirmed_ids"]) == (2, 1, [str(lost.pk)])
    assert len(_lines(journal)) == 2  # a dry run writes nothing

    code, counts = reapply("--journal", str(journal))
    assert (code, counts["confirmed"], counts["unconfirmed_ids"]) == (2, 1, [str(lost.pk)])
    assert _lines(journal)[-1]["state"] == "committed"  # the held one, confirmed
    assert _lines(journal)[-1]["grounding_id"] == str(held.pk)

    with django_capture_on_commit_callbacks(execute=True):
        code, counts = reapply("--journal", str(journal), "--apply-unconfirmed")
    assert (code, counts["reapplied_ids"]) == (0, [str(lost.pk)])
    lost.refresh_from_db()
    assert lost.record_state == RecordState.DISPOSED


def test_an_unwritable_journal_refuses_the_disposal(world, settings, tmp_path):
    settings.GROUNDING_DISPOSAL_JOURNAL = str(tmp_path / "missing" / "disposals.jsonl")
    link = _bound_link(world)
    response = client_for(world.access_steward).post(
        url(link.pk, "disposal/"), DISPOSAL, format="json", HTTP_IF_MATCH='"1"'
    )
    assert response.status_code == 503, response.content
    assert response.json()["code"] == "disposal_journal_unavailable"
    link.refresh_from_db()
    assert link.record_state != RecordState.DISPOSED
    assert QUOTE in _readable(world, link)
    assert AuditEvent.objects.filter(
        action="dispose", outcome="refused", code="disposal_journal_unavailable"
    ).exists()


def test_a_torn_last_line_is_ended_and_counted(world, journal):
    journal.write_text('{"disposal_id": "x", "sta')
    disposal_journal.append(str(journal), {"disposal_id": "y", "state": "intent"})
    found = disposal_journal.read([str(journal)])
    assert found.torn == 1 and list(found.intents) == ["y"]


@settings_(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.sampled_from(["intent", "committed"]), st.sampled_from("abcd")),
            st.just(("torn", "")),
        ),
        max_size=20,
    )
)
def test_the_journal_reads_each_disposal_s_last_word(tmp_path_factory, writes):
    """Whatever the order of the lines and the torn ones between them (a crash mid-
    append), a disposal with a committed line is committed, one with only intents is
    an intent, and every torn line is counted, never read as an entry."""
    path = tmp_path_factory.mktemp("journal") / "disposals.jsonl"
    for state, disposal_id in writes:
        if state == "torn":
            with open(path, "a") as handle:
                handle.write('{"disposal_id": "z", "sta')  # no newline: torn
        else:
            disposal_journal.append(str(path), {"disposal_id": disposal_id, "state": state})
    found = disposal_journal.read([str(path)])
    committed = {i for s, i in writes if s == "committed"}
    assert set(found.committed) == committed
    assert set(found.intents) == {i for s, i in writes if s == "intent"} - committed
    # Torn writes in a row make one torn line, ended by the next append.
    states = [state for state, _ in writes]
    runs = [s == "torn" and (n == 0 or states[n - 1] != "torn") for n, s in enumerate(states)]
    assert found.torn == sum(runs)
