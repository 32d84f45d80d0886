"""What a sequencer batch reads (PostgreSQL): its own rows, by key, whatever the size
of the tables and however stale their statistics.

The tables the log commits grow by thousands of rows a second under bulk
registration; autovacuum's ANALYZE lags behind them. The batch statement once
joined its keys to whole tables, and a planner estimating them small hashed each
table whole at every batch (spilling to disk): the sequencer slowed as the log grew
(300 leaves/s at 100k leaves in `make bench`, from 3,500). Each row and key is now
looked up by key in a LATERAL subquery: the plan has no sequential scan of any
table, however many rows the statistics miss."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from common.kernel import cursors
from grounding import services
from tests import factories
from tests.conftest import requires_postgres
from transparency import sequencer, tables

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]


def _batch_statement_plan() -> str:
    """EXPLAIN of the commitments statement the next batch runs (then rolled back)."""
    seen: list[tuple[str, object]] = []

    def capture(execute, sql, params, many, context):
        if sql.lstrip().startswith("WITH ev AS"):
            seen.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture), transaction.atomic():
        assert sequencer.integrate() > 0
        transaction.set_rollback(True)
    assert len(seen) == 1
    sql, params = seen[0]
    with transaction.atomic(), cursors.server_bound(connection) as cursor:
        cursor.execute("SET LOCAL jit = off", [])
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        transaction.set_rollback(True)
    return plan


def test_a_batch_reads_its_rows_by_key_with_stale_statistics(world):
    sequencer.integrate()
    committed = [*sorted(tables.committed()), "transparency_recordkey"]
    with connection.cursor() as cursor:
        for table in committed:  # statistics taken while the tables are nearly empty
            cursor.execute(f'ANALYZE "{table}"')
    items = [
        factories.link_payload(world.dimension, world.profile, world.passage) for _ in range(600)
    ]
    services.register_many(actor=world.curator, items=items)
    services.register_many(actor=world.curator, items=items[:300])

    plan = _batch_statement_plan()

    scanned = sorted({t for t in committed if f"Seq Scan on {t} " in plan})
    assert scanned == [], plan
    # Each committed table of a registration is read by its primary key, twice
    # (its metadata, then its bytes), and each key by the live-key index.
    for table in ("grounding_historicalgroundinglink", "policies_auditevent"):
        assert plan.count(f" on {table} ") == 2, plan
    assert "using record_key_live_unique on transparency_recordkey" in plan, plan
