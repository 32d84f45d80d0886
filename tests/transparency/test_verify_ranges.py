"""verify_log over several ranges of leaves (PostgreSQL, outside a transaction, as the
command runs): read by the caller's connection in turn, or by connections of their
own reading ahead, it finds the same, at the same index, table and row."""

from __future__ import annotations

import pytest
from django.db import connection

from grounding.models import GroundingLink
from tests.conftest import requires_postgres
from tests.transparency.helpers import two_links_and_a_revision
from transparency import notes
from transparency.models import Log
from transparency.verifier import read, verify

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(params=[1, 2], ids=["in-turn", "read-ahead"])
def ranges(request, monkeypatch):
    """Ranges of 2 leaves (the log below has 3: two ranges), read in turn or ahead."""
    monkeypatch.setattr(read, "CHUNK", 2)
    monkeypatch.setattr(read, "READ_AHEAD", request.param)
    return request.param


@pytest.fixture
def written(world):
    first, _ = two_links_and_a_revision(world)
    return first


def _verify(world):
    return verify(world.dimension.name, verifier_key=notes.signer().verifier_key)


def _sql(statement: str, params: list) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def test_an_untouched_log_verifies(world, written, ranges):
    report = _verify(world)
    assert report.ok, [str(p) for p in report.problems]
    # 4 rows committed by each registration, 2 by the revision.
    assert (report.leaves, report.commitments, report.withheld) == (3, 10, 0)


def test_an_updated_history_row_is_reported_at_its_leaf(world, written, ranges):
    row = (
        GroundingLink.history.filter(grounding_id=written.grounding_id, revision=2)
        .values_list("history_id", flat=True)
        .get()
    )
    _sql(
        "UPDATE grounding_historicalgroundinglink SET owner_ref = 'mallory' WHERE history_id = %s",
        [row],
    )
    report = _verify(world)
    assert [(p.finding, p.index, p.table, p.row) for p in report.problems] == [
        ("commitment", 2, "grounding_historicalgroundinglink", str(row))
    ]


def test_a_deleted_leaf_is_reported_at_its_index(world, written, ranges):
    _sql('DELETE FROM transparency_leaf WHERE "index" = %s', [1])
    problem = _verify(world).first()
    assert (problem.finding, problem.index) == ("leaf_missing", 1)


def test_clean_ranges_are_vouched_for_and_a_broken_one_is_read_again(world, written, ranges):
    """The database vouches for a range whose leaves agree with their rows and events
    (the walk does not compare their fields); a range with a leaf that is not JSON
    fails that statement and is read again with the fields, for the walk to judge."""
    _sql('UPDATE transparency_leaf SET leaf = %s WHERE "index" = %s', [b"not json", 2])
    log = Log.objects.get(dimension=world.dimension)

    chunks = list(read.chunks(log.pk, "default", True, world.dimension.name))

    assert [(c.vouched, [leaf[0] for leaf in c.leaves]) for c in chunks] == [
        (True, [0, 1]),
        (False, [2]),
    ]
    report = _verify(world)
    assert [
        (p.finding, p.index, p.detail) for p in report.problems if p.finding == "leaf_fields"
    ] == [("leaf_fields", 2, "its bytes are not JSON")]
