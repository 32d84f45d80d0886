"""History tables index only the columns their reads filter on: each extra index
is paid for by every write (the bulk paths write thousands of history rows)."""

import pytest
from django.db import connection

EXPECTED = {
    "grounding_historicalgroundinglink": {"grounding_id", "history_date", "history_user_id"},
    "grounding_historicalstatementbinding": {
        "binding_id",
        "link_id",
        "history_date",
        "history_user_id",
    },
    "grounding_historicalpassagebinding": {
        "binding_id",
        "link_id",
        "passage_id",
        "history_date",
        "history_user_id",
    },
    "evidence_historicalpassage": {"passage_id", "content_id", "history_date", "history_user_id"},
    "evidence_historicalsource": {"source_id", "history_date", "history_user_id"},
}


@pytest.mark.django_db
@pytest.mark.parametrize("table", sorted(EXPECTED))
def test_history_table_indexes_only_the_columns_reads_use(table):
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    indexed = {
        column
        for details in constraints.values()
        if details["index"] and not details["primary_key"]
        for column in details["columns"]
    }
    assert indexed == EXPECTED[table], f"{table}: unexpected {indexed ^ EXPECTED[table]}"


def _single_column_indexes(table: str) -> list[str]:
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return sorted(
        details["columns"][0]
        for details in constraints.values()
        if details["index"] and not details["primary_key"] and len(details["columns"]) == 1
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("table", "covered"),
    [
        # Lead columns of composite indexes: a lone index on them would be a second copy.
        ("grounding_groundinglink", {"dimension_id"}),
        ("policies_auditevent", {"grounding_id"}),
        ("grounding_statementbinding", set()),
        ("grounding_passagebinding", set()),
    ],
)
def test_write_heavy_tables_carry_no_redundant_index(table, covered):
    columns = _single_column_indexes(table)
    # One index per column: no LIKE-pattern twin (PostgreSQL) beside the plain one.
    assert len(columns) == len(set(columns)), f"{table}: twice-indexed {columns}"
    assert not covered & set(columns), f"{table}: {covered & set(columns)} indexed alone"
