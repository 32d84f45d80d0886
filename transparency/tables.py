"""The tables whose rows a leaf commits to, and how each row finds its key.

Every accepted write stores history rows (and append-only records); its leaf holds
`HMAC-SHA256(record_key, canonical row)` of each. The apps above this one tell, at
start-up (their `apps.py` `ready()`), which of their tables are committed and which
key a row takes: a link's rows take the link's key, a passage's rows its passage
key (both destroyed by disposal with the text), every other row its Dimension log's
own key (no text: nothing to destroy). Rows of tables not registered are not
committed (`tests/transparency/test_tables.py` holds the list complete).

The canonical row: PostgreSQL's binary form of the row's columns in the model's
field order (`record_send(ROW(...))`), the same bytes whatever the session's time
zone or date style; on SQLite, the compact JSON array SQLite writes of them
(`json_array(...)`). `verify_log` reads the same bytes and hashes them itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import models

# A row's key: the link's, the passage's, or (None) its Dimension log's.
LINK = "link"
PASSAGE = "passage"


@dataclass(frozen=True)
class Committed:
    model: type[models.Model]
    table: str
    pk: str  # the primary key's column
    columns: tuple[str, ...]  # the canonical row's columns, in field order
    key_kind: str | None  # LINK, PASSAGE or None (the log's key)
    key_column: str | None  # the column naming the link or passage
    anchor_column: str | None  # the column tying a row to one event of a batch
    revision_column: str | None = None  # a link's revision (the link's own history)


_registry: dict[str, Committed] = {}


def register(
    model: type[models.Model],
    *,
    key: str | None = None,
    key_field: str | None = None,
    anchor_field: str | None = None,
    revision_field: str | None = None,
) -> None:
    """Commit the rows of `model` (a history model or an append-only one): `key` is
    LINK or PASSAGE with the field naming it, None for the log's key; `anchor_field`
    ties a row of a batch to its event (the link id, or a passage's envelope)."""
    meta = model._meta

    def column(name: str | None) -> str | None:
        return meta.get_field(name).column if name else None

    _registry[meta.db_table] = Committed(
        model=model,
        table=meta.db_table,
        pk=meta.pk.column,
        columns=tuple(f.column for f in meta.concrete_fields),
        key_kind=key,
        key_column=column(key_field),
        anchor_column=column(anchor_field),
        revision_column=column(revision_field),
    )


def committed() -> dict[str, Committed]:
    return _registry


def get(table: str) -> Committed | None:
    return _registry.get(table)


def subject(kind: str, value) -> str:
    """The key subject of a link or passage id (the `RecordKey.subject`)."""
    return f"{kind}:{value}"


def log_subject(log_id: int) -> str:
    return f"log:{log_id}"
