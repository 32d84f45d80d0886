"""What the verifier reads: a log's leaves, by ranges of indexes, with their level-0
nodes, their audit events and (unless skipped) each commitment with the canonical
bytes of the row it names and the key it names.

Every statement costs its range's work, whatever the planner's statistics: the
leaves of a range (the log's index), their level-0 nodes (the node key's range),
their audit events and committed rows and keys (by key). On PostgreSQL results come
in binary (bytea as bytes, not hex text), the ids and times as the text the leaf
holds (the database renders them), the JSON as text for orjson; and outside a
transaction (`manage.py verify_log`) READ_AHEAD connections of their own read the
next ranges while the walk hashes this one. Inside one (a test's), the caller's
connection reads them in turn: only it sees the transaction's rows."""

from __future__ import annotations

import threading
import uuid
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime

import orjson
from django.db import connections

from common.kernel import compat
from transparency import tables
from transparency.models import RecordKey

CHUNK = 2000  # indexes per range (2,000 read ahead better than 5,000 or 20,000)
# Connections reading ranges ahead of the walk (PostgreSQL, outside a transaction).
READ_AHEAD = 2


@dataclass
class Chunk:
    # (index, leaf bytes, stored hash, level-0 node, leaf row with its audit event)
    leaves: list
    # Each leaf's commitments with their key ids (`entries`), when they are checked.
    entries: list = field(default_factory=list)
    # {table: {primary key as text: (canonical bytes, the subject of the row's key)}}
    rows: dict = field(default_factory=dict)
    # {key id: (subject, key or None if destroyed, the disposal that destroyed it)}
    keys: dict = field(default_factory=dict)


def chunks(log_id: int, using: str, commitments: bool) -> Iterator[Chunk]:
    """The log's leaves by index, CHUNK indexes at a time."""
    connection = connections[using]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT max({connection.ops.quote_name('index')}) FROM transparency_leaf "
            "WHERE log_id = %s",
            [log_id],
        )
        last = cursor.fetchone()[0]
    if last is None:
        return
    ranges = [(low, low + CHUNK) for low in range(0, last + 1, CHUNK)]
    if connection.vendor != "postgresql":
        for low, high in ranges:
            yield _read_sqlite(connection, log_id, low, high, commitments)
        return
    statement = _rows_sql(connection) if commitments else None
    if connection.in_atomic_block or READ_AHEAD < 2 or len(ranges) < 2:
        pg = compat.driver_connection(connection)
        for low, high in ranges:
            with compat.database_errors(connection):
                yield _read_pg(pg, log_id, low, high, statement)
        return
    yield from _read_ahead(connection, log_id, ranges, statement)


def _read_ahead(connection, log_id: int, ranges: list, commitments: dict | None) -> Iterator[Chunk]:
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
            return _read_pg(own, log_id, low, high, commitments)

    pending: deque = deque()
    todo = iter(ranges)
    with ThreadPoolExecutor(READ_AHEAD, thread_name_prefix="verify-log") as pool:
        try:
            for low, high in todo:
                pending.append(pool.submit(read, low, high))
                if len(pending) > READ_AHEAD:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()
            pool.shutdown(wait=True)
            for own in opened:
                own.close()


# -- PostgreSQL

_LEAVES = (
    'SELECT "index", leaf, leaf_hash, audit_event::text, action, grounding_id::text, '
    "revision, actor_ref, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), "
    "commitments::text, key_ids::text FROM transparency_leaf "
    'WHERE log_id = $1 AND "index" >= $2 AND "index" < $3 ORDER BY "index"'
)
_NODES = (
    "SELECT position, hash FROM transparency_node "
    "WHERE log_id = $1 AND level = 0 AND position >= $2 AND position < $3"
)
_EVENTS = (
    "WITH w AS MATERIALIZED (SELECT unnest(string_to_array($1, ',')::uuid[]) AS k) "
    "SELECT event_id::text, action, grounding_id::text, resulting_revision, actor_ref, "
    "to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), "
    "dimension_ref, outcome FROM policies_auditevent "
    "WHERE event_id IN (SELECT k FROM w)"
)
_KEYS = (
    "WITH w AS MATERIALIZED (SELECT unnest(string_to_array($1, ',')::bigint[]) AS k) "
    "SELECT id, subject, key, destroyed_by::text FROM transparency_recordkey "
    "WHERE id IN (SELECT k FROM w)"
)


def _rows_sql(connection) -> dict[str, str]:
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


def _read_pg(pg, log_id: int, low: int, high: int, rows_sql: dict | None) -> Chunk:
    """One range, on this psycopg connection; `rows_sql`: the committed tables'
    statements (`_rows_sql`), or None (commitments not checked)."""
    loads = orjson.loads
    with compat.raw_cursor(pg) as cursor:
        cursor.execute(_LEAVES, [log_id, low, high], binary=True)
        rows = cursor.fetchall()
        if not rows:
            return Chunk([])
        cursor.execute(_NODES, [log_id, low, high], binary=True)
        nodes = dict(cursor.fetchall())
        cursor.execute(_EVENTS, [",".join(r[3] for r in rows)], binary=True)
        events = {e[0]: e for e in cursor.fetchall()}
        leaves, said = [], []
        for r in rows:
            e = events.get(r[3])
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
                said.append(entries(row["commitments"], loads(r[10])))
        if rows_sql is None:
            return Chunk(leaves)
        wanted, key_ids = _wanted(said)
        stored = {}
        for table, ids in wanted.items():
            if table in rows_sql:
                cursor.execute(rows_sql[table], [",".join(ids)], binary=True)
                stored[table] = {pk: (data, subject) for pk, data, subject in cursor.fetchall()}
        keys = {}
        if key_ids:
            cursor.execute(_KEYS, [",".join(map(str, key_ids))], binary=True)
            keys = {k[0]: k[1:] for k in cursor.fetchall()}
    return Chunk(leaves, said, stored, keys)


# -- What a leaf row says it commits to, as the checks read it

# An entry: (table, row, HMAC, key id); a part that is not what a write stores is
# None (a table, a row and an HMAC are text; a key id is an integer).
Entry = tuple[str | None, str | None, str | None, int | None]
_BIGINT = 2**63


def entries(commitments, key_ids) -> list[Entry]:
    """A leaf row's commitments with their key ids. The columns are whatever the
    database holds: rewritten, they may hold anything JSON can. Each unusable part is
    None, for the checks to report at the leaf's index (never a query or type error
    that would stop the walk)."""
    if not isinstance(commitments, list):
        commitments = [commitments]
    if not isinstance(key_ids, list):
        key_ids = []
    out = []
    for n, c in enumerate(commitments):
        c = c if isinstance(c, dict) else {}
        key_id = key_ids[n] if n < len(key_ids) else None
        out.append(
            (
                _str(c.get("table")),
                _str(c.get("row")),
                _str(c.get("hmac")),
                key_id
                if type(key_id) is int and -_BIGINT <= key_id < _BIGINT  # not a bool
                else None,
            )
        )
    return out


def _str(value) -> str | None:
    return value if isinstance(value, str) else None


def _wanted(said: list[list[Entry]]) -> tuple[dict[str, list[str]], set[int]]:
    """The rows to read, by table (only keys their table's primary key can hold), and
    the key ids."""
    wanted: dict[str, set[str]] = {}
    key_ids: set[int] = set()
    for leaf in said:
        for table, pk, _, key_id in leaf:
            if table is not None and pk is not None and _is_key(table, pk):
                wanted.setdefault(table, set()).add(pk)
            if key_id is not None:
                key_ids.add(key_id)
    return {t: sorted(ids) for t, ids in wanted.items()}, key_ids


def _is_key(table: str, pk: str) -> bool:
    """Whether `pk` is a primary key of `table` as the leaf names it (the text the
    readers give back): a canonical integer or hyphenated UUID, or text without the
    comma the readers join keys with."""
    spec = tables.get(table)
    if spec is None:
        return False
    kind = spec.model._meta.pk.get_internal_type()
    if kind in ("AutoField", "BigAutoField", "IntegerField", "BigIntegerField"):
        try:
            return str(int(pk)) == pk and -_BIGINT <= int(pk) < _BIGINT
        except ValueError:
            return False
    if kind == "UUIDField":
        try:
            return str(uuid.UUID(pk)) == pk
        except ValueError:
            return False
    return "," not in pk and "\x00" not in pk


# -- SQLite (and any other database): Django's cursor, per table


def _read_sqlite(connection, log_id: int, low: int, high: int, commitments: bool) -> Chunk:
    with connection.cursor() as cursor:
        cursor.execute(
            'SELECT "index", leaf, leaf_hash, audit_event, action, grounding_id, revision, '
            "actor_ref, at, commitments, key_ids FROM transparency_leaf "
            'WHERE log_id = %s AND "index" >= %s AND "index" < %s ORDER BY "index"',
            [log_id, low, high],
        )
        rows = cursor.fetchall()
        if not rows:
            return Chunk([])
        cursor.execute(
            "SELECT position, hash FROM transparency_node "
            "WHERE log_id = %s AND level = 0 AND position >= %s AND position < %s",
            [log_id, low, high],
        )
        nodes = dict(cursor.fetchall())
        events = {}
        ids = [r[3] for r in rows]
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            cursor.execute(
                "SELECT event_id, action, grounding_id, resulting_revision, actor_ref, "
                "occurred_at, dimension_ref, outcome FROM policies_auditevent "
                f"WHERE event_id IN ({', '.join(['%s'] * len(part))})",
                part,
            )
            events.update((_uuid(e[0]), e) for e in cursor.fetchall())
    leaves, said = [], []
    for r in rows:
        event_id = _uuid(r[3])
        e = events.get(event_id)
        row = {
            "audit_event": event_id, "action": r[4], "grounding_id": _uuid(r[5]),
            "revision": r[6], "actor_ref": r[7], "at": _instant(r[8]),
            "commitments": _json(r[9]),
            "event": None if e is None else {
                "event_id": event_id, "action": e[1], "grounding_id": _uuid(e[2]),
                "revision": e[3], "actor_ref": e[4], "at": _instant(e[5]),
                "dimension": e[6], "outcome": e[7],
            },
        }  # fmt: skip
        leaves.append((r[0], r[1], r[2], nodes.get(r[0]), row))
        said.append(entries(row["commitments"], _json(r[10])))
    if not commitments:
        return Chunk(leaves)
    return Chunk(leaves, said, *_commitments_sqlite(connection, said))


def _commitments_sqlite(connection, said: list[list[Entry]]) -> tuple[dict, dict]:
    wanted, key_ids = _wanted(said)
    stored = {t: canonical_rows(connection, t, set(ids)) for t, ids in wanted.items()}
    keys = {
        k.pk: (k.subject, None if k.key is None else bytes(k.key),
               str(k.destroyed_by) if k.destroyed_by else None)
        for k in RecordKey.objects.using(connection.alias)
        .filter(pk__in=key_ids)
        .only("subject", "key", "destroyed_at", "destroyed_by")
    }  # fmt: skip
    return stored, keys


def canonical_rows(connection, table: str, ids: set[str]) -> dict[str, tuple[bytes, str | None]]:
    """{primary key as text: (canonical bytes, key subject)} of these rows (SQLite:
    `json_array` of the columns; PostgreSQL: `record_send`)."""
    spec = tables.get(table)
    if spec is None:
        return {}
    quote = connection.ops.quote_name
    columns = ", ".join(f"h.{quote(c)}" for c in spec.columns)
    key = f"h.{quote(spec.key_column)}" if spec.key_column else "NULL"
    pk_field = spec.model._meta.pk
    values = [pk_field.to_python(i) for i in ids]
    if connection.vendor == "postgresql":
        expression = f"record_send(ROW({columns}))"
        where, params = f"h.{quote(spec.pk)} = ANY(%s)", [values]
    else:
        expression = f"json_array({columns})"
        values = [v.hex if isinstance(v, uuid.UUID) else v for v in values]
        where, params = f"h.{quote(spec.pk)} IN ({', '.join(['%s'] * len(values))})", values
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT h.{quote(spec.pk)}, {expression}, {key} FROM {quote(table)} h WHERE {where}",
            params,
        )
        out = {}
        for pk, data, key_value in cursor.fetchall():
            blob = data.encode("utf-8") if isinstance(data, str) else bytes(data)
            subject = (
                f"{spec.key_kind}:{_text(key_value)}"
                if spec.key_kind and key_value is not None
                else None
            )
            out[_text(pk)] = (blob, subject)
        return out


def _text(value) -> str:
    """A key as the leaf names it. The verifier's own copy of
    `transparency.commitments.row_id`, kept apart on purpose: the verifier shares no
    code with the write path (the import-linter contract), so a fault there cannot
    hide itself here."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, str) and len(value) == 32:
        try:
            return str(uuid.UUID(hex=value))
        except ValueError:
            return value
    return str(value)


def _json(value):
    return orjson.loads(value) if isinstance(value, str | bytes) else value


def _uuid(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and len(value) == 36:
        return value
    return str(value if isinstance(value, uuid.UUID) else uuid.UUID(str(value)))


def _instant(value) -> str:
    """An instant as the leaf writes it: RFC 3339 in UTC with microseconds and Z."""
    if isinstance(value, str) and value.endswith("Z"):
        return value
    if isinstance(value, str):  # SQLite's text
        value = datetime.fromisoformat(value)
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
