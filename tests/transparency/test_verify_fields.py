"""verify_log compares each leaf's fields with its row's and its audit event's (issue
#28); on PostgreSQL the database vouches for the leaves whose fields agree and the
walk compares the rest in Python (#37, `read_pg._VOUCHED`). Every field rewritten,
and leaf bytes that are not JSON at all, are reported at the leaf, on both databases
and in a test's transaction (a statement failing on such bytes must not spoil it)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import orjson
import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from common.kernel.canonical import canonical_bytes
from policies.models import AuditEvent
from tests.conftest import requires_postgres
from tests.transparency.helpers import two_links_and_a_revision
from transparency import notes
from transparency.models import Leaf, Log
from transparency.verifier import read, verify


def _verify(world):
    return verify(world.dimension.name, verifier_key=notes.signer().verifier_key)


def _set_leaf(index: int, data: bytes) -> None:
    with connection.cursor() as cursor:
        cursor.execute('UPDATE transparency_leaf SET leaf = %s WHERE "index" = %s', [data, index])
        assert cursor.rowcount == 1


def _leaf(index: int) -> dict:
    return orjson.loads(bytes(Leaf.objects.values_list("leaf", flat=True).get(index=index)))


# A field of leaf 1 and what it is rewritten to (the leaf's bytes stay sorted compact
# JSON, as the sequencer writes them; only that field differs from its row).
FIELDS = {
    "dimension": "another-dimension",
    "index": 5,
    "action": "registre",
    "grounding_id": str(uuid.UUID(int=7)),
    "revision": 7,
    "actor_ref": "user:mallory",
    "at": "2001-01-01T00:00:00.000000Z",
    "audit_event": str(uuid.UUID(int=8)),
    "commitments": [],
}


@pytest.mark.parametrize("name, value", FIELDS.items(), ids=FIELDS.keys())
def test_each_rewritten_field_of_a_leaf_is_reported(world, name, value):
    two_links_and_a_revision(world)
    leaf = _leaf(1)
    assert leaf[name] != value
    _set_leaf(1, orjson.dumps({**leaf, name: value}, option=orjson.OPT_SORT_KEYS))

    report = _verify(world)

    fields = [(p.finding, p.index, p.detail) for p in report.problems if p.finding == "leaf_fields"]
    assert fields == [("leaf_fields", 1, f"its {name} is not its row's")]
    assert report.leaves == 3


def test_a_leaf_with_a_field_more_holds_its_fields(world):
    """Its bytes are not what was hashed (leaf_hash), but each field is its row's: no
    leaf_fields finding, whichever path compared them."""
    two_links_and_a_revision(world)
    _set_leaf(1, orjson.dumps({**_leaf(1), "extra": 1}, option=orjson.OPT_SORT_KEYS))

    report = _verify(world)

    assert {(p.finding, p.index) for p in report.problems} >= {("leaf_hash", 1)}
    assert "leaf_fields" not in {p.finding for p in report.problems}


# Bytes no write stores: PostgreSQL refuses to read most as JSON (the statement fails,
# and the range is read again for the walk to judge).
GARBAGE = {
    "not_utf8": (b"\xff\xfe{}", "its bytes are not JSON"),
    "not_json": (b"not json", "its bytes are not JSON"),
    "nested_too_deep": (b"[" * 100_000, "its bytes are not JSON"),
    "json_not_an_object": (b"[1, 2]", "its bytes are not JSON"),
    "a_nul_in_a_string": (b'{"dimension": "\\u0000"}', "its dimension is not its row's"),
}


@pytest.mark.parametrize("data, detail", GARBAGE.values(), ids=GARBAGE.keys())
def test_leaf_bytes_that_are_not_its_json_are_reported_and_the_walk_goes_on(world, data, detail):
    two_links_and_a_revision(world)
    _set_leaf(1, data)

    report = _verify(world)

    fields = [(p.finding, p.index, p.detail) for p in report.problems if p.finding == "leaf_fields"]
    assert fields == [("leaf_fields", 1, detail)]
    assert report.first().index == 1
    assert report.leaves == 3
    # The test's transaction is still usable after the failed statement.
    assert Leaf.objects.count() == 3


# The audit event's column and the leaf field it must equal.
EVENT = {
    "action": ("action", "registre"),
    "grounding_id": ("grounding_id", uuid.UUID(int=9)),
    "resulting_revision": ("revision", 9),
    "actor_ref": ("actor_ref", "user:mallory"),
    "occurred_at": ("at", datetime(2001, 1, 1, tzinfo=UTC)),
    "dimension_ref": ("dimension", "another-dimension"),
}


@pytest.mark.parametrize("column, name_value", EVENT.items(), ids=EVENT.keys())
def test_each_rewritten_field_of_an_audit_event_is_reported(world, column, name_value):
    name, value = name_value
    two_links_and_a_revision(world)
    event = Leaf.objects.values_list("audit_event", flat=True).get(index=1)
    # Audit rows are append-only to the ORM (common.kernel.history): rewritten in SQL,
    # each value as the backend stores it.
    field = AuditEvent._meta.get_field(column)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE policies_auditevent SET {column} = %s WHERE event_id = %s",
            [
                field.get_db_prep_value(value, connection),
                AuditEvent._meta.pk.get_db_prep_value(event, connection),
            ],
        )
        assert cursor.rowcount == 1

    report = _verify(world)

    audit = [(p.index, p.detail) for p in report.problems if p.finding == "audit"]
    assert audit == [(1, f"its audit event's {name} is not the leaf's")]


# Text PostgreSQL stores (no NUL, no lone surrogate).
_TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=40)


@requires_postgres
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(actor_ref=_TEXT, dimension=_TEXT.filter(bool))
def test_the_database_vouches_for_any_text_the_sequencer_writes(world, actor_ref, dimension):
    """The bytes the database expects (`read_pg._BEFORE`, `_AFTER`) are the canonical
    JSON's for any actor and dimension name, escapes included: a leaf written as the
    sequencer writes it is vouched for, not read again for the walk to compare."""
    if not Leaf.objects.exists():
        two_links_and_a_revision(world)
    with connection.cursor() as cursor:
        for index in range(3):  # every leaf of the range names the dimension
            leaf = {**_leaf(index), "actor_ref": actor_ref, "dimension": dimension}
            cursor.execute(
                'UPDATE transparency_leaf SET actor_ref = %s, leaf = %s WHERE "index" = %s',
                [actor_ref, canonical_bytes(leaf), index],
            )
            cursor.execute(
                "UPDATE policies_auditevent SET actor_ref = %s, dimension_ref = %s "
                "WHERE event_id = %s",
                [actor_ref, dimension, leaf["audit_event"]],
            )
    log = Log.objects.get(dimension=world.dimension)

    (chunk,) = [c for c in read.chunks(log.pk, "default", True, dimension) if c.leaves]

    assert chunk.vouched, (actor_ref, dimension)
