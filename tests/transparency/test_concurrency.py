"""Writers in parallel with the sequencer running (PostgreSQL): every write gets its
leaf, indexes are contiguous, and the log verifies."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from grounding import services
from tests import factories
from tests.conftest import requires_postgres
from transparency import notes, sequencer
from transparency.models import Leaf, Log, PendingWrite
from transparency.verifier import verify

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]
WRITERS, EACH = 4, 8


def test_parallel_writers_and_the_sequencer(world):
    stop = threading.Event()
    runner = threading.Thread(target=sequencer.run_forever, args=(0.05, stop))
    runner.start()
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for _ in range(EACH):
                payload = factories.link_payload(world.dimension, world.profile, world.passage)
                services.register(actor=world.curator, payload=payload)
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=write) for _ in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    runner.join()
    assert not errors, errors
    sequencer.integrate()
    assert not PendingWrite.objects.exists()
    indexes = sorted(Leaf.objects.values_list("index", flat=True))
    assert indexes == list(range(WRITERS * EACH))
    assert Log.objects.get(dimension=world.dimension).size == WRITERS * EACH
    report = verify(world.dimension.name, verifier_key=notes.signer().verifier_key)
    assert report.ok, [str(p) for p in report.problems]
    assert report.commitments == WRITERS * EACH * 4
