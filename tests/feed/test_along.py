"""The rows an accepted write's listeners add (the log's queue row, the outbox's events)
reach the database as one statement on PostgreSQL (`common.kernel.along`), in the
write's transaction (a rolled-back write leaves neither: tests/feed/test_outbox.py,
tests/transparency)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from common.kernel.along import Along, combined
from feed.models import Event
from tests import factories
from tests.conftest import requires_postgres
from transparency.models import PendingWrite


def test_plain_statements_become_with_queries_of_the_last():
    statements = [
        Along("INSERT INTO a (x) VALUES (%s)", [1]),
        Along("INSERT INTO b (y) VALUES (%s, %s)", [2, 3]),
    ]
    assert combined(statements) == [
        Along(
            "WITH along_0 AS (INSERT INTO a (x) VALUES (%s)) INSERT INTO b (y) VALUES (%s, %s)",
            [1, 2, 3],
        )
    ]


def test_a_statement_with_its_own_with_list_takes_the_plain_ones_first_in_it():
    statements = [
        Along("WITH l AS (SELECT %s) INSERT INTO e SELECT * FROM l", ["e"]),
        Along("INSERT INTO p (x) VALUES (%s)", ["p"]),
    ]
    assert combined(statements) == [
        Along(
            "WITH along_0 AS (INSERT INTO p (x) VALUES (%s)), "
            "l AS (SELECT %s) INSERT INTO e SELECT * FROM l",
            ["p", "e"],
        )
    ]


def test_two_statements_with_with_lists_are_sent_apart_and_one_alone_as_it_is():
    first = Along("WITH a AS (SELECT 1) INSERT INTO x SELECT * FROM a", [])
    second = Along("WITH b AS (SELECT 2) INSERT INTO y SELECT * FROM b", [])
    assert combined([first, second]) == [first, second]
    assert combined([Along("INSERT INTO z VALUES (%s)", [9])]) == [
        Along("INSERT INTO z VALUES (%s)", [9])
    ]


@requires_postgres
@pytest.mark.django_db
def test_a_registration_sends_its_queue_row_and_its_event_in_one_statement(world):
    factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    with CaptureQueriesContext(connection) as captured:
        link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    touching = [
        q["sql"]
        for q in captured.captured_queries
        if "transparency_pendingwrite" in q["sql"] or "feed_event" in q["sql"]
    ]
    assert len(touching) == 1, touching
    assert touching[0].startswith("WITH along_0 AS (INSERT INTO transparency_pendingwrite")
    assert "INSERT INTO feed_event" in touching[0]
    assert Event.objects.filter(subject=str(link.pk)).count() == 1
    assert len(PendingWrite.objects.order_by("-id").first().events) == 1
