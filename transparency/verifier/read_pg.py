"""The verifier's PostgreSQL reader: one range of the log on a driver connection
(`read_range`), and ranges read ahead by connections of its own (`read_ahead`).

It reads below Django, where `manage.py verify_log` spends its time
(docs/performance.md): statements whose cost is the range's whatever the planner's
statistics (the leaves by the log's index with their audit events joined by key in
the same statement, their level-0 nodes by the node key's range, committed rows and
keys by key), results in binary
(bytea as bytes, not hex text), the ids and times as the text the leaf holds (the
database renders them), the JSON as text for orjson."""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import orjson

from common.kernel import compat
from transparency import tables
from transparency.verifier.chunk import Chunk, entries, wanted_rows


def read_ahead(
    connection, log_id: int, ranges: list, commitments: dict | None, workers: int, dimension: str
) -> Iterator[Chunk]:
    """The ranges in order, `workers` connections of their own reading the next ones
    while the caller hashes this one (outside a transaction only: a transaction's rows
    are seen by its own connection alone)."""
    import psycopg
    import psycopg.sql

    params = connection.get_connection_params()
    role = connection.settings_dict["OPTIONS"].get("assume_role")
    local, opened, guard = threading.local(), [], threading.Lock()

    def read(low: int, high: int) -> Chunk:
        own = getattr(local, "connection", None)
        if own is None:
            own = psycopg.connect(**params, autocommit=True)
            with guard:
                opened.append(own)
            if role:  # as Django's own connections take it (OPTIONS["assume_role"])
                own.execute(psycopg.sql.SQL("SET ROLE {}").format(psycopg.sql.Identifier(role)))
            local.connection = own
        with compat.database_errors(connection):
            return read_range(own, log_id, low, high, commitments, dimension)

    pending: deque = deque()
    todo = iter(ranges)
    with ThreadPoolExecutor(workers, thread_name_prefix="verify-log") as pool:
        try:
            for low, high in todo:
                pending.append(pool.submit(read, low, high))
                if len(pending) > workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()
            pool.shutdown(wait=True)
            for own in opened:
                own.close()


# The leaves of a range with their audit events, in one statement and one result: each
# event looked up by its key in a LATERAL subquery (`LIMIT 1` keeps the planner from
# flattening it into a join it would estimate from the events table's statistics).
_LEAVES = (
    'SELECT l."index", l.leaf, l.leaf_hash, l.audit_event::text, l.action, '
    "l.grounding_id::text, l.revision, l.actor_ref, "
    "to_char(l.at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), "
    "l.commitments::text, l.key_ids::text, "
    "e.event_id::text, e.action, e.grounding_id::text, e.resulting_revision, e.actor_ref, "
    "to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), "
    "e.dimension_ref, e.outcome "
    "FROM transparency_leaf l LEFT JOIN LATERAL ("
    "SELECT * FROM policies_auditevent a WHERE a.event_id = l.audit_event LIMIT 1) e ON true "
    'WHERE l.log_id = $1 AND l."index" >= $2 AND l."index" < $3 ORDER BY l."index"'
)
# The same leaves, each with whether the database vouches for it: its bytes are the
# leaf the sequencer writes for its row (sorted compact JSON), but for its commitments,
# which are any JSON equal to the row's (jsonb equality, as the walk's `leaf.get(name)
# == value` compares them); and its audit event's fields are its row's. The fields
# before and after the commitments are compared as bytes with the text the row makes
# (`_BEFORE`, `_AFTER`); only the commitments are parsed (a third less of the
# database's work a leaf than parsing the whole leaf and comparing each field, which
# this costs the same as reading the fields for Python to compare: #37,
# `log_verify_tree`). A range whose every leaf is vouched for is read without the
# fields the walk would otherwise compare leaf by leaf; any other range is read again
# with them (`_LEAVES`), so a leaf the database does not vouch for (a rewritten one, or
# one whose escaping differs from PostgreSQL's) is judged as before. $4: the dimension.
_AT = "to_char(l.at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
_BEFORE = (
    "convert_to('{\"action\":' || to_json(l.action)::text "
    "|| ',\"actor_ref\":' || to_json(l.actor_ref)::text "
    f'|| \',"at":"\' || {_AT} '
    '|| \'","audit_event":"\' || l.audit_event::text || \'","commitments":\', \'UTF8\')'
)
_AFTER = (
    "convert_to(',\"dimension\":' || to_json($4::text)::text "
    "|| ',\"grounding_id\":' || coalesce('\"' || l.grounding_id::text || '\"', 'null') "
    '|| \',"index":\' || l."index"::text '
    "|| ',\"revision\":' || coalesce(l.revision::text, 'null') || '}', 'UTF8')"
)
_VOUCHED_CHECK = (
    "(length(l.leaf) > length(p.b) + length(p.a) "
    "AND substring(l.leaf FROM 1 FOR length(p.b)) = p.b "
    "AND substring(l.leaf FROM length(l.leaf) - length(p.a) + 1) = p.a "
    "AND convert_from(substring(l.leaf FROM length(p.b) + 1 "
    "FOR length(l.leaf) - length(p.b) - length(p.a)), 'UTF8')::jsonb = l.commitments "
    "AND e.action = l.action "
    "AND e.grounding_id IS NOT DISTINCT FROM l.grounding_id "
    "AND e.resulting_revision IS NOT DISTINCT FROM l.revision "
    "AND e.actor_ref = l.actor_ref AND e.occurred_at = l.at "
    "AND e.dimension_ref = $4) IS TRUE"
)
# OFFSET 0 keeps the expected bytes a subquery of their own, made once a leaf (pulled
# up, each reference would make them again).
_VOUCHED_FROM = (
    "FROM transparency_leaf l "
    f"CROSS JOIN LATERAL (SELECT {_BEFORE} AS b, {_AFTER} AS a OFFSET 0) AS p "
    "LEFT JOIN LATERAL ("
    "SELECT * FROM policies_auditevent a WHERE a.event_id = l.audit_event LIMIT 1) e ON true "
    'WHERE l.log_id = $1 AND l."index" >= $2 AND l."index" < $3 ORDER BY l."index"'
)
# The commitments are read for a disposal's leaf (the walk collects disposals), and for
# every leaf when they are checked (with its key ids).
_VOUCHED = (
    'SELECT l."index", l.leaf, l.leaf_hash, l.action, '
    "CASE WHEN l.action = 'dispose' THEN l.commitments::text ELSE 'null' END, 'null', "
    f"{_VOUCHED_CHECK} {_VOUCHED_FROM}"
)
_VOUCHED_WITH = (
    'SELECT l."index", l.leaf, l.leaf_hash, l.action, l.commitments::text, l.key_ids::text, '
    f"{_VOUCHED_CHECK} {_VOUCHED_FROM}"
)
_NODES = (
    "SELECT position, hash FROM transparency_node "
    "WHERE log_id = $1 AND level = 0 AND position >= $2 AND position < $3"
)
_KEYS = (
    "WITH w AS MATERIALIZED (SELECT unnest(string_to_array($1, ',')::bigint[]) AS k) "
    "SELECT id, subject, key, destroyed_by::text FROM transparency_recordkey "
    "WHERE id IN (SELECT k FROM w)"
)


def rows_statements(connection) -> dict[str, str]:
    """{committed table: the statement reading its rows of some primary keys ($1, the
    keys' text joined by commas): (primary key as text, `record_send` of the columns,
    the subject of the row's key)}."""
    quote = connection.ops.quote_name
    out = {}
    for table, spec in tables.committed().items():
        columns = ", ".join(f"h.{quote(c)}" for c in spec.columns)
        subject = (
            f"'{spec.key_kind}:' || h.{quote(spec.key_column)}::text"
            if spec.key_kind and spec.key_column
            else "NULL::text"
        )
        pk, cast = quote(spec.pk), spec.model._meta.pk.db_type(connection)
        # Each key looked up in the primary key's index: a plan estimated from the
        # CTE (few rows), not from the table's statistics (a sequential scan at each
        # range when they are stale or absent).
        out[table] = (
            f"WITH w AS MATERIALIZED (SELECT unnest(string_to_array($1, ',')::{cast}[]) AS k) "
            f"SELECT h.{pk}::text, record_send(ROW({columns})), {subject} FROM {quote(table)} h "
            f"WHERE h.{pk} IN (SELECT k FROM w)"
        )
    return out


def read_range(
    pg, log_id: int, low: int, high: int, rows_sql: dict | None, dimension: str
) -> Chunk:
    """One range, on this psycopg connection; `rows_sql`: the committed tables'
    statements (`rows_statements`), or None (commitments not checked). A range whose
    every leaf the database vouches for (`_VOUCHED`) comes back `vouched`, without
    the fields; any other, with every leaf's fields for the walk to compare."""
    loads = orjson.loads
    with compat.raw_cursor(pg) as cursor:
        rows = _vouched(pg, cursor, [log_id, low, high, dimension], rows_sql is not None)
        if rows == []:
            return Chunk([])
        cursor.execute(_NODES, [log_id, low, high], binary=True)
        nodes = dict(cursor.fetchall())
        if rows is not None:
            leaves = [
                (r[0], r[1], r[2], nodes.get(r[0]), {"action": r[3], "commitments": loads(r[4])})
                for r in rows
            ]
            key_ids = [loads(r[5]) for r in rows] if rows_sql is not None else None
            return _read_rows(cursor, rows_sql, leaves, key_ids, vouched=True)
        cursor.execute(_LEAVES, [log_id, low, high], binary=True)
        rows = cursor.fetchall()
        if not rows:
            return Chunk([])
        leaves, key_ids = [], []
        for r in rows:
            e = r[11:] if r[11] is not None else None
            row = {
                "audit_event": r[3], "action": r[4], "grounding_id": r[5], "revision": r[6],
                "actor_ref": r[7], "at": r[8], "commitments": loads(r[9]),
                "event": None if e is None else {
                    "event_id": e[0], "action": e[1], "grounding_id": e[2], "revision": e[3],
                    "actor_ref": e[4], "at": e[5], "dimension": e[6], "outcome": e[7],
                },
            }  # fmt: skip
            leaves.append((r[0], r[1], r[2], nodes.get(r[0]), row))
            if rows_sql is not None:
                key_ids.append(loads(r[10]))
        return _read_rows(cursor, rows_sql, leaves, key_ids, vouched=False)


def _read_rows(cursor, rows_sql: dict | None, leaves: list, key_ids, vouched: bool) -> Chunk:
    """The chunk of these leaves, with the rows and keys their commitments name when
    they are checked (`rows_sql`)."""
    if rows_sql is None:
        return Chunk(leaves, vouched=vouched)
    said = [entries(leaf[4]["commitments"], ids) for leaf, ids in zip(leaves, key_ids, strict=True)]
    wanted, wanted_keys = wanted_rows(said)
    stored = {}
    for table, ids in wanted.items():
        if table in rows_sql:
            cursor.execute(rows_sql[table], [",".join(ids)], binary=True)
            stored[table] = {pk: (data, subject) for pk, data, subject in cursor.fetchall()}
    keys = {}
    if wanted_keys:
        cursor.execute(_KEYS, [",".join(map(str, wanted_keys))], binary=True)
        keys = {k[0]: k[1:] for k in cursor.fetchall()}
    return Chunk(leaves, said, stored, keys, vouched=vouched)


def _vouched(pg, cursor, params: list, commitments: bool) -> list | None:
    """The range's leaves as `_VOUCHED` reads them, if the database vouches for every
    one; None if it does not (a leaf that is not what it should be, or whose bytes
    are not JSON PostgreSQL takes, which fails the statement: inside a transaction, a
    savepoint keeps the transaction usable)."""
    import psycopg

    guard = (
        pg.transaction()
        if pg.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
        else contextlib.nullcontext()
    )
    try:
        with guard:
            cursor.execute(_VOUCHED_WITH if commitments else _VOUCHED, params, binary=True)
            rows = cursor.fetchall()
    except psycopg.Error as exc:
        # Data exceptions (class 22: not UTF-8, not JSON, a NUL jsonb refuses) and
        # program limits (class 54: nested too deep); anything else is the database's.
        if (exc.sqlstate or "")[:2] not in ("22", "54"):
            raise
        return None
    return rows if all(r[6] for r in rows) else None
