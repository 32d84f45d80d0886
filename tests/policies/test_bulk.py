"""common.kernel.bulk: COPY (PostgreSQL) and bulk_create write the rows, and the history
rows, that save() per row would write."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from common.kernel.bulk import COPY_MIN_ROWS, insert_rows, insert_with_history
from grounding import services
from grounding.models import GroundingLink, PassageBinding, StatementBinding
from policies.choices import AuditOutcome
from policies.models import AuditEvent, Dimension
from tests import factories
from tests.conftest import requires_postgres

BATCH = COPY_MIN_ROWS + 4


def _tracked_values(model, row) -> dict:
    history_model = model.history.model
    return {f.attname: getattr(row, f.attname) for f in history_model.tracked_fields}


def _register_batch(world, size: int = BATCH) -> list[GroundingLink]:
    items = [factories.link_payload(world.dimension, world.profile) for _ in range(size)]
    return services.register_many(actor=world.curator, items=items)


# A batch (COPY), a few links (one statement: common.kernel.together), one link.
SIZES = pytest.mark.parametrize("size", [BATCH, 3, 1])


@SIZES
def test_bulk_history_rows_hold_what_each_written_row_holds(world, size):
    links = _register_batch(world, size)
    for model, key in (
        (GroundingLink, "grounding_id"),
        (StatementBinding, "link_id"),
        (PassageBinding, "link_id"),
    ):
        for link in links:
            (current,) = model.objects.filter(**{key: link.grounding_id})
            (history,) = model.history.filter(**{key: link.grounding_id})
            assert _tracked_values(model, history) == _tracked_values(model, current), (
                f"{model.__name__} history row differs from the row written for {link.pk}"
            )
            assert history.history_type == "+"
            assert history.history_user_id == world.curator.pk
            assert history.history_change_reason == "registered as a candidate"


@SIZES
def test_bulk_writes_reload_with_the_in_memory_values(world, size):
    links = _register_batch(world, size)
    for link in links:
        assert link._state.adding is False
        stored = GroundingLink.objects.get(pk=link.pk)
        assert model_to_dict(stored) == model_to_dict(link)
        assert stored.current_statement.answer_selector == link.current_statement.answer_selector
        assert stored.current_passage.source_revision_binding == (
            link.current_passage.source_revision_binding
        )
    assert AuditEvent.objects.filter(
        action="register_bulk", outcome=AuditOutcome.APPLIED, grounding_id__in=[x.pk for x in links]
    ).count() == len(links)


@requires_postgres
def test_batches_go_through_copy_and_single_rows_through_insert(world):
    with CaptureQueriesContext(connection) as batch:
        _register_batch(world)
    batch_sql = " ".join(q["sql"] for q in batch.captured_queries)
    # COPY runs on the raw connection; an INSERT here would mean the batch fell back.
    assert 'INSERT INTO "grounding_groundinglink"' not in batch_sql
    assert 'COPY "grounding_groundinglink" (' in batch_sql
    assert f"FROM STDIN -- {BATCH} rows" in batch_sql
    # History rows are copied by the database from the rows just written.
    history_sql = [
        q["sql"]
        for q in batch.captured_queries
        if q["sql"].startswith('INSERT INTO "grounding_historicalgroundinglink"')
    ]
    assert len(history_sql) == 1
    assert 'JOIN "grounding_groundinglink" m' in history_sql[0]
    with CaptureQueriesContext(connection) as single:
        _register_batch(world, size=1)
    single_sql = " ".join(q["sql"] for q in single.captured_queries)
    assert 'INSERT INTO "grounding_groundinglink"' in single_sql
    assert 'INSERT INTO "grounding_historicalgroundinglink"' in single_sql


@requires_postgres
def test_a_few_links_are_written_in_one_statement_with_their_history_and_audit(world):
    with CaptureQueriesContext(connection) as few:
        links = _register_batch(world, size=3)
    sent = [q["sql"] for q in few.captured_queries if "INSERT INTO" in q["sql"]]
    # Beside one statement for the write queued for the transparency log's sequencer and
    # the feed's outbox events (common.kernel.along; the delivery workers write the
    # deliveries, the log on).
    queued = [sql for sql in sent if "transparency_pendingwrite" in sql]
    outbox = [sql for sql in sent if "INSERT INTO feed_event" in sql]
    writes = [sql for sql in sent if sql not in queued and sql not in outbox]
    assert (len(sent), len(queued), len(writes)) == (2, 1, 1)
    assert outbox == queued
    assert "feed_delivery" not in outbox[0]
    assert writes[0].startswith("WITH m0 AS (INSERT INTO")
    for table in ("grounding_statementbinding", "grounding_historicalstatementbinding",
                  "grounding_passagebinding", "grounding_historicalpassagebinding",
                  "grounding_groundinglink", "grounding_historicalgroundinglink",
                  "policies_auditevent"):  # fmt: skip
        assert writes[0].count(f'INSERT INTO "{table}"') == 1, table
    # The history rows follow the objects' order, as the table path's do.
    history = GroundingLink.history.filter(grounding_id__in=[x.pk for x in links])
    assert [h.grounding_id for h in history.order_by("history_id")] == [x.pk for x in links]
    ids = [x.pk for x in links]
    assert AuditEvent.objects.filter(action="register_bulk", grounding_id__in=ids).count() == 3


def test_a_model_whose_key_the_database_assigns_gets_its_keys_back(db, django_user_model):
    user = django_user_model.objects.create(username="bulk-writer")
    dimensions = [Dimension(name=f"bulk-{i}", namespace="urn:bulk") for i in range(BATCH)]
    insert_with_history(Dimension, dimensions, user=user, change_reason="bulk test")
    assert all(isinstance(d.pk, int) for d in dimensions)
    names = sorted(Dimension.history.filter(name__startswith="bulk-").values_list("name", "id"))
    assert names == sorted((d.name, d.pk) for d in dimensions)


_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=40,
)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)


@pytest.mark.django_db
@settings(
    max_examples=25,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(texts=st.lists(_text, min_size=BATCH, max_size=BATCH), refs=_json)
def test_any_text_and_json_survive_the_bulk_path_unchanged(texts, refs):
    # Tabs, newlines and backslashes are COPY's own delimiters and escapes.
    events = [
        AuditEvent(
            actor_ref=text,
            action="bulk_roundtrip",
            outcome=AuditOutcome.APPLIED,
            code=text[:64],
            grounding_id=uuid.uuid4(),
            references={"value": refs, "text": text},
        )
        for text in texts
    ]
    insert_rows(AuditEvent, events)
    stored = {e.event_id: e for e in AuditEvent.objects.filter(action="bulk_roundtrip")}
    for event in events:
        row = stored[event.event_id]
        assert (row.actor_ref, row.code, row.grounding_id, row.references) == (
            event.actor_ref,
            event.code,
            event.grounding_id,
            {"value": refs, "text": event.actor_ref},
        )
    AuditEvent.disposal_queryset().filter(action="bulk_roundtrip").delete()


def test_per_object_history_user_and_reason_win_over_the_defaults(db, django_user_model):
    default_user = django_user_model.objects.create(username="bulk-default")
    other = django_user_model.objects.create(username="bulk-other")
    dimensions = [Dimension(name=f"reason-{i}", namespace="urn:bulk") for i in range(BATCH)]
    dimensions[0]._change_reason = "imported from the policy registry"
    dimensions[1]._history_user = other
    insert_with_history(Dimension, dimensions, user=default_user, change_reason="bulk test")
    rows = {
        h.name: (h.history_user_id, h.history_change_reason)
        for h in Dimension.history.filter(name__startswith="reason-")
    }
    assert rows["reason-0"] == (default_user.pk, "imported from the policy registry")
    assert rows["reason-1"] == (other.pk, "bulk test")
    assert rows["reason-2"] == (default_user.pk, "bulk test")


def test_the_one_statement_takes_postgresql_placeholders_in_order():
    from common.kernel.cursors import numbered

    assert numbered("INSERT INTO t (a, b) VALUES (%s, %s), (%s, %s)") == (
        "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)"
    )
    assert numbered("SELECT 1") == "SELECT 1"
    with pytest.raises(ValueError, match="no placeholder"):
        numbered("SELECT '%d', %s")


@requires_postgres
def test_the_one_statement_is_logged_and_its_errors_are_djangos(world):
    from django.db import IntegrityError, transaction

    from common.kernel.together import Insert, insert_together

    (link,) = _register_batch(world, size=1)
    twin = StatementBinding.objects.get(pk=link.current_statement_id)
    twin._state.adding = True  # the same key again: a unique violation
    with (
        CaptureQueriesContext(connection) as seen,
        pytest.raises(IntegrityError),  # Django's, not psycopg's
        transaction.atomic(),
    ):
        insert_together([Insert(StatementBinding, [twin])], user=world.curator,
                        change_reason="twice")  # fmt: skip
    (write,) = [q["sql"] for q in seen.captured_queries if "INSERT INTO" in q["sql"]]
    # Sent as it is, with PostgreSQL's placeholders: the values are bound by the server.
    assert write.startswith('WITH m0 AS (INSERT INTO "grounding_statementbinding"')
    assert "$1" in write and "%s" not in write
    # Nothing of it stayed, and the connection goes on.
    assert StatementBinding.history.filter(history_change_reason="twice").count() == 0
    assert GroundingLink.objects.get(pk=link.pk).current_statement_id == twin.pk
