"""Tamper drills with garbage (issue #28): a leaf row whose commitments or key ids
were overwritten with what no write stores. verify_log reports the leaf at its index
and goes on to the end; it never stops with a database or type error. On both
databases (the verifier reads each in its own way)."""

from __future__ import annotations

import pytest
from django.db import connection

from tests.transparency.helpers import two_links_and_a_revision
from transparency import notes
from transparency.verifier import verify

# name: (column, what it is set to, what verify_log finds at the leaf). The leaf's own
# bytes still hold what was committed, so a rewritten commitments column is also a
# leaf whose fields are not its row's.
ROW_GONE, NOT_AN_ENTRY = {"leaf_fields", "row_missing"}, {"leaf_fields", "commitment"}
GARBAGE = {
    "row_not_a_key": (
        "commitments",
        '[{"table": "grounding_historicalgroundinglink", "row": "x,1", "hmac": "AA=="}]',
        ROW_GONE,
    ),
    "row_a_huge_number": (
        "commitments",
        '[{"table": "policies_auditevent", "row": "99999999999999999999999", "hmac": "AA=="}]',
        ROW_GONE,
    ),
    "table_unknown": (
        "commitments",
        '[{"table": "pg_authid", "row": "1", "hmac": "AA=="}]',
        ROW_GONE,
    ),
    "entry_not_an_object": ("commitments", '[1, "two", null]', NOT_AN_ENTRY),
    "commitments_not_a_list": ("commitments", '{"table": "policies_auditevent"}', NOT_AN_ENTRY),
    "key_ids_not_numbers": ("key_ids", '["x", {"a": 1}, 1.5]', {"key"}),
    "key_ids_not_a_list": ("key_ids", '"1,2"', {"key"}),
}


@pytest.mark.parametrize("column, value, findings", GARBAGE.values(), ids=GARBAGE.keys())
def test_garbage_in_a_leaf_row_is_reported_at_its_index(world, column, value, findings):
    two_links_and_a_revision(world)
    with connection.cursor() as cursor:
        cursor.execute(f'UPDATE transparency_leaf SET {column} = %s WHERE "index" = 1', [value])
        assert cursor.rowcount == 1

    report = verify(world.dimension.name, verifier_key=notes.signer().verifier_key)

    assert not report.ok
    assert {p.index for p in report.problems} == {1}, report.problems
    assert {p.finding for p in report.problems} == findings
    # The other leaves' commitments were still checked.
    assert report.commitments >= 8
