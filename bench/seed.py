"""COPY helpers: the database's own limit; and the 1,000,000-link read corpus.

Rows are cloned from a template link that the real service registered, so every
column holds what the real path writes (history rows included)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

# The rows one registration writes: link, two bindings, their three history rows and
# one audit event. Parents first so deferred foreign keys are satisfied at commit.
TABLES = (
    "grounding_statementbinding",
    "grounding_passagebinding",
    "grounding_groundinglink",
    "grounding_historicalstatementbinding",
    "grounding_historicalpassagebinding",
    "grounding_historicalgroundinglink",
    "policies_auditevent",
)


def template_rows(conn: psycopg.Connection, grounding_id: uuid.UUID) -> dict[str, tuple]:
    """{table: (columns, row)} for the rows written when `grounding_id` was registered."""
    out = {}
    with conn.cursor() as cur:
        for table in TABLES:
            key = "grounding_id" if table.endswith("groundinglink") else "link_id"
            if table == "policies_auditevent":
                key = "grounding_id"
            cur.execute(f"SELECT * FROM {table} WHERE {key} = %s LIMIT 1", [grounding_id])
            columns = [d.name for d in cur.description]
            out[table] = (columns, cur.fetchone())
    return out


def _adapt(value: Any) -> Any:
    return Jsonb(value) if isinstance(value, dict | list) else value


def clone_rows(
    template: dict[str, tuple], count: int, *, history_start: int = 10_000_000
) -> Iterator[tuple[str, list[str], list[tuple]]]:
    """Rows for `count` new links, table by table, with fresh ids."""
    ids = []
    for _ in range(count):
        ids.append({"link": uuid.uuid4(), "statement": uuid.uuid4(), "passage": uuid.uuid4()})
    t_link = template["grounding_groundinglink"][1][
        template["grounding_groundinglink"][0].index("grounding_id")
    ]
    t_statement = template["grounding_statementbinding"][1][0]
    t_passage = template["grounding_passagebinding"][1][0]
    for table in TABLES:
        columns, row = template[table]
        rows = []
        for index, new in enumerate(ids):
            mapping = {
                t_link: new["link"],
                t_statement: new["statement"],
                t_passage: new["passage"],
            }
            values = [mapping.get(v, v) if isinstance(v, uuid.UUID) else v for v in row]
            if "history_id" in columns:
                values[columns.index("history_id")] = history_start + index
            if table == "policies_auditevent":
                values[columns.index("event_id")] = uuid.uuid4()
            rows.append(tuple(_adapt(v) for v in values))
        yield table, columns, rows


Batch = list[tuple[str, list[str], list[tuple]]]  # (table, columns, rows), parents first


def link_batches(template, count: int, *, batch: int | None = None,
                 history_start: int = 10_000_000) -> list[Batch]:  # fmt: skip
    """`count` cloned links' rows in batches of `batch` links (one batch by default).

    Built in Python before any clock starts: what is timed is the COPY."""
    tables = list(clone_rows(template, count, history_start=history_start))
    step = batch or count
    return [
        [(table, columns, rows[start : start + step]) for table, columns, rows in tables]
        for start in range(0, count, step)
    ]


def copy_batches(conn, batches: list[Batch], *, target_prefix: str = "") -> tuple[float, int]:
    """COPY each batch's rows, table by table, and commit it; (seconds, rows written)."""
    started = time.perf_counter()
    written = 0
    with conn.cursor() as cur:
        for batch in batches:
            for table, columns, rows in batch:
                column_list = ", ".join(f'"{c}"' for c in columns)
                with cur.copy(f"COPY {target_prefix}{table} ({column_list}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
                written += len(rows)
            conn.commit()
    return time.perf_counter() - started, written


def insert_batches(conn, batches: list[Batch], *, target_prefix: str = "") -> tuple[float, int]:
    """executemany of the same rows, the other way a driver can write them; one
    transaction per batch; (seconds, rows written)."""
    started = time.perf_counter()
    written = 0
    with conn.cursor() as cur:
        for batch in batches:
            for table, columns, rows in batch:
                column_list = ", ".join(f'"{c}"' for c in columns)
                marks = ", ".join(["%s"] * len(columns))
                cur.executemany(
                    f"INSERT INTO {target_prefix}{table} ({column_list}) VALUES ({marks})", rows
                )
                written += len(rows)
            conn.commit()
    return time.perf_counter() - started, written


def grow_links(conn, template, count: int, *, first: int, history_start: int,
               vary: dict[str, str] | None = None) -> None:  # fmt: skip
    """Clone the template link `count` times inside the database (INSERT … SELECT over
    generate_series: no row crosses the wire, so a 1,000,000-link corpus takes
    minutes), in one transaction. Clone n (from `first`) gets fresh UUIDs, history ids
    from `history_start` + n, and, for a column named in `vary`, the SQL expression
    given there (of n)."""
    t_link = template["grounding_groundinglink"][1][
        template["grounding_groundinglink"][0].index("grounding_id")
    ]
    t_statement = template["grounding_statementbinding"][1][0]
    t_passage = template["grounding_passagebinding"][1][0]
    mapped = {t_link: "i.link", t_statement: "i.statement", t_passage: "i.passage"}
    with conn.cursor() as cur:
        # The clones' references hold by construction: the foreign-key triggers (a
        # check per row and key) are skipped for this transaction (superuser only).
        cur.execute("SET LOCAL session_replication_role = replica")
        cur.execute(
            "CREATE TEMP TABLE bench_ids ON COMMIT DROP AS SELECT n, gen_random_uuid() AS link,"
            " gen_random_uuid() AS statement, gen_random_uuid() AS passage"
            " FROM generate_series(%s::bigint, %s::bigint) AS n",
            [first, first + count - 1],
        )
        for table in TABLES:
            columns, row = template[table]
            select = []
            for column, value in zip(columns, row, strict=True):
                if column == "history_id":
                    select.append(f"{int(history_start)} + i.n")
                elif column == "event_id":
                    select.append("gen_random_uuid()")
                elif vary and column in vary:
                    select.append(vary[column])
                elif isinstance(value, uuid.UUID) and value in mapped:
                    select.append(mapped[value])
                else:
                    select.append(f't."{column}"')
            # The template's own row: by its history id, or by its key (first column).
            key = "history_id" if "history_id" in columns else columns[0]
            column_list = ", ".join(f'"{c}"' for c in columns)
            cur.execute(
                f"INSERT INTO {table} ({column_list}) SELECT {', '.join(select)} "
                f'FROM bench_ids i, (SELECT * FROM {table} WHERE "{key}" = %s) t',
                [row[columns.index(key)]],
            )
    conn.commit()


def make_scratch_tables(conn, prefix: str, tables=TABLES, *, foreign_keys: bool = False) -> None:
    """Copies of the real tables (defaults and indexes); with `foreign_keys`, also the
    real tables' foreign keys, deferred as theirs are, each pointing at the copy of
    its table where one is made, else at the real table (the template's parents)."""
    with conn.cursor() as cur:
        for table in reversed(tables):
            cur.execute(f"DROP TABLE IF EXISTS {prefix}{table} CASCADE")
        for table in tables:
            cur.execute(
                f"CREATE TABLE {prefix}{table} (LIKE {table} INCLUDING DEFAULTS INCLUDING INDEXES)"
            )
        if foreign_keys:
            for table in tables:
                cur.execute(
                    "SELECT confrelid::regclass::text, pg_get_constraintdef(oid) "
                    "FROM pg_constraint WHERE contype = 'f' AND conrelid = %s::regclass",
                    [table],
                )
                for parent, definition in cur.fetchall():
                    if parent in tables:
                        definition = definition.replace(
                            f"REFERENCES {parent}(", f"REFERENCES {prefix}{parent}("
                        )
                    cur.execute(f"ALTER TABLE {prefix}{table} ADD {definition}")
    conn.commit()


def truncate_scratch(conn, prefix: str, tables=TABLES) -> None:
    with conn.cursor() as cur:
        cur.execute(", ".join(f"{prefix}{t}" for t in tables).join(("TRUNCATE ", "")))
    conn.commit()


def drop_scratch(conn, prefix: str, tables=TABLES) -> None:
    with conn.cursor() as cur:
        for table in reversed(tables):
            cur.execute(f"DROP TABLE IF EXISTS {prefix}{table} CASCADE")
    conn.commit()
