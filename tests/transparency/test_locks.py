"""What the sequencer locks (PostgreSQL): its log's row, never the Dimension's.

A batch locks the log it grows. Locking the Dimension's row with it (a FOR UPDATE
over the join with the Dimension) made every write whose foreign-key check or update
touches that row wait for the batch, and the batch wait for such writes: writes
queued behind the log. Each test sets `lock_timeout`, so a wait is a fast, concrete
failure (55P03 lock_not_available) rather than a hang."""

from __future__ import annotations

import threading

import pytest
from django.db import OperationalError, connection, connections, transaction

from tests.conftest import requires_postgres, wait_for_lock_waiters
from transparency import notes, sequencer
from transparency.models import Leaf, Log, PendingWrite
from transparency.verifier import verify

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]

# What a concurrent write holds on, or asks of, the Dimension's row: the foreign-key
# check of an insert referencing it, and an update of one of its columns.
KEY_SHARE = "SELECT 1 FROM policies_dimension WHERE id = %s FOR KEY SHARE"
UPDATE = "UPDATE policies_dimension SET owner_ref = owner_ref WHERE id = %s"


class _Session(threading.Thread):
    """Run `work` in a thread of its own, so on a connection of its own."""

    def __init__(self, work) -> None:
        super().__init__(daemon=True)
        self.work, self.result, self.error = work, None, None

    def run(self) -> None:
        try:
            self.result = self.work()
        except BaseException as exc:  # reported by the test
            self.error = exc
        finally:
            connections.close_all()

    def outcome(self, timeout: float = 30):
        self.join(timeout)
        assert not self.is_alive(), "the session is still waiting"
        if self.error is not None:
            raise self.error
        return self.result


def _timed_out(sql: str, params: list) -> str | None:
    """Run `sql` in its own transaction with a 1 s lock_timeout: None when it got its
    locks, else the error's SQLSTATE."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '1s'")
            cursor.execute(sql, params)
    except OperationalError as exc:
        return getattr(exc.__cause__, "sqlstate", None) or str(exc)
    return None


@pytest.mark.parametrize("held", [KEY_SHARE, UPDATE], ids=["fk-check", "update"])
def test_a_batch_does_not_wait_for_a_write_holding_the_dimension_row(world, link, held):
    dimension_id = world.dimension.pk
    locked, release = threading.Event(), threading.Event()

    def write() -> None:  # a write in flight, holding the Dimension's row
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(held, [dimension_id])
            locked.set()
            release.wait(30)

    writer = _Session(write)
    writer.start()
    assert locked.wait(30)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '1s'")
        try:
            assert sequencer.integrate() == 1
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")
    finally:
        release.set()
        writer.outcome()
    assert Log.objects.get(dimension=world.dimension).size == 1
    assert not PendingWrite.objects.exists()


def test_a_write_touching_the_dimension_row_does_not_wait_for_a_batch(world, link):
    log = Log.objects.get(dimension=world.dimension)
    dimension_id = world.dimension.pk
    inserted, release = threading.Event(), threading.Event()

    def hold_the_batch() -> None:
        # An uncommitted node at the position the batch's first leaf makes: the batch
        # takes its locks, then waits on this row's key (the node table has no
        # foreign key, so this holds no lock on the log or the Dimension).
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO transparency_node (log_id, level, position, hash) "
                "VALUES (%s, 0, 0, %s)",
                [log.pk, b"\0" * 32],
            )
            inserted.set()
            release.wait(30)
            raise _RolledBack

    holder = _Session(hold_the_batch)
    holder.start()
    assert inserted.wait(30)
    batch = _Session(sequencer.integrate)
    batch.start()
    try:
        wait_for_lock_waiters(1)  # the batch, locks taken, waits on the node
        probes = {
            "fk-check": _Session(lambda: _timed_out(KEY_SHARE, [dimension_id])),
            "update": _Session(lambda: _timed_out(UPDATE, [dimension_id])),
            "log row": _Session(
                lambda: _timed_out(
                    "SELECT 1 FROM transparency_log WHERE id = %s FOR UPDATE", [log.pk]
                )
            ),
        }
        for probe in probes.values():
            probe.start()
        outcomes = {name: probe.outcome() for name, probe in probes.items()}
    finally:
        release.set()
        with pytest.raises(_RolledBack):
            holder.outcome()
    # The Dimension's row is free; the log's own row stays the batch's until it commits.
    assert outcomes == {"fk-check": None, "update": None, "log row": "55P03"}
    assert batch.outcome() == 1
    assert list(Leaf.objects.values_list("index", flat=True)) == [0]
    report = verify(world.dimension.name, verifier_key=notes.signer().verifier_key)
    assert report.ok, [str(p) for p in report.problems]


class _RolledBack(Exception):
    """Ends the holder's transaction by rolling it back."""
