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
