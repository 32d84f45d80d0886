"""The stream served by uvicorn (ASGI) on PostgreSQL, with concurrent writers and the
log's sequencer running: a stream dropped and resumed with Last-Event-ID misses
nothing and repeats nothing, logindexes only increase, and every subject's sequences
arrive as 1..k."""

from __future__ import annotations

import threading
import time

import pytest

from feed.models import Event
from tests import factories
from tests.conftest import requires_postgres
from tests.feed.live import SseReader, sequencer, uvicorn
from tests.ops.live import database_url

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]


def _wait(condition, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_dropped_and_resumed_stream_has_no_gap_under_concurrent_writers(world):
    database = database_url()
    token = factories.token_for(world.curator)

    def writer(count: int) -> None:
        from django.db import connection

        try:
            for _ in range(count):
                link = factories.register_link(world.curator, world.dimension, world.profile,
                                               world.passage)  # fmt: skip
                factories.assess(world.reviewer, link)
        finally:
            connection.close()

    with sequencer(database), uvicorn(database, GROUNDING_STREAM_POLL_SECONDS="0.05") as base:
        first = SseReader(base, world.dimension.name, token)
        assert first.status == 200
        writers = [threading.Thread(target=writer, args=(6,)) for _ in range(4)]
        for thread in writers:
            thread.start()
        _wait(lambda: len(first.events) >= 10)
        first.close()  # dropped mid-way, writers still writing
        seen = list(first.events)
        for thread in writers:
            thread.join()
        expected = Event.objects.filter(dimension=world.dimension).count()
        assert expected == 48
        second = SseReader(base, world.dimension.name, token, last_id=seen[-1][0])
        _wait(lambda: len(seen) + len(second.events) >= expected)
        time.sleep(0.5)  # nothing more may come
        second.close()
    got = [event for _, event in seen + second.events]
    assert len(got) == expected
    assert len({e["id"] for e in got}) == expected
    indexes = [e["logindex"] for e in got]
    assert indexes == sorted(indexes) and len(set(indexes)) == expected
    subjects: dict[str, list[int]] = {}
    for event in got:
        subjects.setdefault(event["subject"], []).append(event["sequence"])
    assert all(seqs == [1, 2] for seqs in subjects.values()), subjects
    assert len(subjects) == 24


def test_idle_streams_hold_no_database_connection_each(world):
    """Fifty open streams: the server's connections stay those of its small executor
    pool and watcher, not one per subscriber."""
    from django.db import connection

    database = database_url()
    token = factories.token_for(world.curator)

    def server_connections() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid()"
            )
            return cursor.fetchone()[0]

    with uvicorn(database, GROUNDING_STREAM_POLL_SECONDS="0.2") as base:
        readers = [SseReader(base, world.dimension.name, token) for _ in range(50)]
        try:
            assert all(reader.opened.wait(30) for reader in readers)
            time.sleep(1)
            held = server_connections()
        finally:
            for reader in readers:
                reader.close()
    assert held <= 12, held
