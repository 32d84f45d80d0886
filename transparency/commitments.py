"""The commitments of a batch of writes: `HMAC-SHA256(record_key, canonical row)` of
every committed row each write stored, grouped by the event (leaf) it belongs to.

Computed by the sequencer, in its own transaction, from the rows as stored (history
rows and append-only records are never changed after the write; disposal, the one
lawful rewrite, integrates the log before it purges and destroys keys). On
PostgreSQL it is one statement: the database reads each row's canonical bytes
(`record_send(ROW(columns))`), finds the record key of its link, passage or log or
creates it (`gen_random_bytes`, kept apart in `transparency_recordkey`), and computes
`hmac(row, key, 'sha256')` (pgcrypto); only the 32-byte HMACs come back. Elsewhere
(SQLite) the same is done in Python over `json_array(columns)`.

Which event a row belongs to, in a write of several (a bulk, a fan-out, a WSP batch):
the event whose id, link or WSP import is the row's anchor (`transparency.tables`);
an unanchored row goes to the write's first event.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from common.kernel import cursors
from transparency import tables
from transparency.models import RecordKey


@dataclass
class Made:
    """One event's commitments: (table, row, base64 HMAC, key id), and the link
    revisions its rows made besides the event's own."""

    commitments: list[tuple[str, str, str, int]] = field(default_factory=list)
    revisions: list[tuple[uuid.UUID, int]] = field(default_factory=list)


@dataclass(frozen=True)
class Event:
    n: int  # the event's place in the batch (the leaves' order)
    log_id: int
    grounding_id: uuid.UUID | None
    revision: int | None


@dataclass(frozen=True)
class Write:
    """A queued write: its events (in order), the committed rows it stored by table,
    and which of its events (by place in `events`) each anchor text names."""

    events: list[Event]
    rows: dict[str, list]
    anchors: dict[str, int]


def canonical_expression(connection, spec: tables.Committed, alias: str) -> str:
    """SQL for the canonical bytes (PostgreSQL) or text (elsewhere) of a row of `spec`."""
    quote = connection.ops.quote_name
    columns = ", ".join(f"{alias}.{quote(c)}" for c in spec.columns)
    if connection.vendor == "postgresql":
        return f"record_send(ROW({columns}))"
    return f"json_array({columns})"


def compute(connection, writes: Sequence[Write]) -> dict[int, Made]:
    """{event n: Made} for every event of these writes: one statement for the batch
    on PostgreSQL."""
    made = {e.n: Made() for w in writes for e in w.events}
    writes = [
        Write(w.events, {t: k for t, k in w.rows.items() if k and tables.get(t)}, w.anchors)
        for w in writes
        if w.events
    ]
    if not any(w.rows for w in writes):
        return made
    if connection.vendor == "postgresql":
        found = _postgresql(connection, writes)
    else:
        found = [f for w in writes for f in _python(connection, w)]
    by_n = {e.n: e for w in writes for e in w.events}
    for n, table, row, digest, key_id, gid, rev in sorted(found, key=lambda f: (f[0], f[1], f[2])):
        made[n].commitments.append((table, row, digest, key_id))
        event = by_n[n]
        if rev is not None and (gid, rev) != (event.grounding_id, event.revision):
            made[n].revisions.append((gid, rev))
    return made


def _postgresql(connection, writes: list[Write]) -> list[tuple]:
    table_names = tuple(sorted({t for w in writes for t in w.rows}))
    events = [(e.n, e.log_id, i) for i, w in enumerate(writes) for e in w.events]
    # An anchor is the text of a UUID column (an event, a link, an import): one with a
    # comma names no row, and would not survive the split below.
    anchors = [
        (a, i, w.events[n].n)
        for i, w in enumerate(writes)
        for a, n in w.anchors.items()
        if "," not in a
    ]
    params: list = [
        _joined(e[0] for e in events),
        _joined(e[1] for e in events),
        _joined(e[2] for e in events),
        _joined(a[0] for a in anchors),
        _joined(a[1] for a in anchors),
        _joined(a[2] for a in anchors),
    ]
    for table in table_names:
        keys = [(k, i) for i, w in enumerate(writes) for k in w.rows.get(table, ())]
        params += [_joined(k for k, _ in keys), _joined(i for _, i in keys)]
    with cursors.server_bound(connection) as cursor:
        cursor.execute(_statement(connection.alias, table_names), params)
        found = cursor.fetchall()
    missing = [f for f in found if f[3] is None]
    if missing:
        raise RuntimeError(f"{len(missing)} committed rows found no record key")
    return found


def _joined(values) -> str:
    """The values' text joined by commas, which the statement splits back into an array
    (`string_to_array`): one string a parameter instead of an array psycopg would dump
    element by element in Python (about a tenth of the sequencer's time a leaf). Every
    value is an integer, a UUID or an anchor without a comma; a comma would shift
    every later value, so it is refused."""
    text = [str(v) for v in values]
    if any("," in t for t in text):
        raise ValueError("a committed row's key holds a comma")
    return ",".join(text)


@functools.lru_cache(maxsize=128)
def _statement(using: str, table_names: tuple[str, ...]) -> str:
    """The batch's one statement. Every row and key is looked up by its key in a
    LATERAL subquery (`LIMIT 1` keeps the planner from flattening it into a join): a
    batch costs its own rows, whatever the tables' size and however stale their
    statistics. (Joined plainly, a table growing by thousands of rows a second is
    estimated small, hashed whole at every batch and spilled to disk: the sequencer
    then slows as the log grows.)"""
    from django.db import connections

    connection = connections[using]
    quote = connection.ops.quote_name
    selects, hmacs = [], []
    for table in table_names:
        spec = tables.get(table)
        pk = quote(spec.pk)
        pk_type = spec.model._meta.pk.db_type(connection)
        key = (
            f"'{spec.key_kind}:' || h.{quote(spec.key_column)}::text"
            if spec.key_kind
            else "NULL::text"
        )
        anchor = f"h.{quote(spec.anchor_column)}::text" if spec.anchor_column else "NULL::text"
        revision = (
            f"h.{quote(spec.key_column)}::uuid AS gid, h.{quote(spec.revision_column)}::int AS rev"
            if spec.revision_column
            else "NULL::uuid AS gid, NULL::int AS rev"
        )
        selects.append(
            f"SELECT '{table}'::text AS t, x.pk::text AS id, h.s, h.a, h.gid, h.rev, x.w "
            f"FROM unnest(string_to_array(%s, ',')::{pk_type}[], "
            "string_to_array(%s, ',')::int[]) AS x(pk, w) CROSS JOIN LATERAL ("
            f"SELECT {key} AS s, {anchor} AS a, {revision} FROM {quote(table)} h "
            f"WHERE h.{pk} = x.pk LIMIT 1) h"
        )
        # The rows' bytes are read and hashed last, by key: the rows themselves are
        # never held in a materialized CTE (a bulk's would spill to disk).
        hmacs.append(
            f"SELECT rk.n, rk.t, rk.id, encode(hmac(h.b, rk.key, 'sha256'), 'base64'), "
            f"rk.kid, rk.gid, rk.rev FROM rk CROSS JOIN LATERAL ("
            f"SELECT {canonical_expression(connection, spec, 'h')} AS b FROM {quote(table)} h "
            f"WHERE h.{pk} = rk.id::{pk_type} LIMIT 1) h WHERE rk.t = '{table}'"
        )
    statement = f"""
WITH ev AS (
  SELECT * FROM unnest(string_to_array(%s, ',')::int[], string_to_array(%s, ',')::bigint[],
                       string_to_array(%s, ',')::int[]) AS e(n, log_id, w)
), fw AS (
  SELECT w, min(n) AS n FROM ev GROUP BY w
), am AS (
  SELECT * FROM unnest(string_to_array(%s, ','), string_to_array(%s, ',')::int[],
                       string_to_array(%s, ',')::int[]) AS m(a, w, n)
), r(t, id, s, a, gid, rev, w) AS (
  {" UNION ALL ".join(selects)}
), rs AS (
  SELECT r.*, ev.n, COALESCE(r.s, 'log:' || ev.log_id) AS subj
  FROM r JOIN fw f ON f.w = r.w LEFT JOIN am ON am.a = r.a AND am.w = r.w
  JOIN ev ON ev.n = COALESCE(am.n, f.n)
), subjects AS (
  SELECT DISTINCT subj FROM rs
), live AS (
  SELECT q.subj, k.id, k.key FROM subjects q LEFT JOIN LATERAL (
    SELECT id, key FROM transparency_recordkey
    WHERE subject = q.subj AND destroyed_at IS NULL LIMIT 1) k ON true
), nk AS (
  INSERT INTO transparency_recordkey (subject, key, created_at)
  SELECT subj, gen_random_bytes(32), now() FROM live WHERE id IS NULL
  ON CONFLICT (subject) WHERE destroyed_at IS NULL DO NOTHING
  RETURNING id, subject, key
), k AS (
  SELECT id, subject, key FROM nk
  UNION ALL
  SELECT id, subj, key FROM live WHERE id IS NOT NULL
), rk AS (
  SELECT rs.n, rs.t, rs.id, rs.gid, rs.rev, k.id AS kid, k.key
  FROM rs LEFT JOIN k ON k.subject = rs.subj
)
{" UNION ALL ".join(hmacs)}
"""
    return cursors.numbered(statement)


def _python(connection, write: Write) -> list[tuple]:
    events = write.events
    found: list[tuple] = []
    for table, keys in write.rows.items():
        for row in canonical_rows(connection, tables.get(table), keys):
            place = write.anchors.get(row.anchor, 0) if row.anchor is not None else 0
            event = events[place]
            subject = row.subject or tables.log_subject(event.log_id)
            found.append((event.n, table, row, subject))
    using = connection.alias
    subjects = {f[3] for f in found}
    live = {
        k.subject: k
        for k in RecordKey.objects.using(using).filter(
            subject__in=subjects, destroyed_at__isnull=True
        )
    }
    missing = sorted(subjects - live.keys())
    if missing:
        created = RecordKey.objects.using(using).bulk_create(
            [RecordKey(subject=s, key=os.urandom(32)) for s in missing]
        )
        live.update((k.subject, k) for k in created)
    out = []
    for n, table, row, subject in found:
        key = live[subject]
        digest = hmac.new(bytes(key.key), row.data, hashlib.sha256).digest()
        out.append((n, table, row.id, _b64(digest), key.pk, row.grounding_id, row.revision))
    return out


def _b64(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode("ascii")


@dataclass(frozen=True)
class CanonicalRow:
    id: str
    data: bytes
    subject: str | None
    anchor: str | None
    grounding_id: uuid.UUID | None
    revision: int | None


def canonical_rows(connection, spec: tables.Committed, keys: list) -> list[CanonicalRow]:
    """The committed rows of `spec.table` with these keys, as the log commits them."""
    if not keys:
        return []
    quote = connection.ops.quote_name
    key_col = f"h.{quote(spec.key_column)}" if spec.key_column else "NULL"
    anchor = f"h.{quote(spec.anchor_column)}" if spec.anchor_column else "NULL"
    revision = f"h.{quote(spec.revision_column)}" if spec.revision_column else "NULL"
    data = canonical_expression(connection, spec, "h")
    found: list[CanonicalRow] = []
    with connection.cursor() as cursor:
        for start in range(0, len(keys), 500):
            chunk = [_db_key(k) for k in keys[start : start + 500]]
            marks = ", ".join(["%s"] * len(chunk))
            cursor.execute(
                f"SELECT h.{quote(spec.pk)}, {data}, {key_col}, {anchor}, {revision} "
                f"FROM {quote(spec.table)} h WHERE h.{quote(spec.pk)} IN ({marks})",
                chunk,
            )
            for pk, text, key_value, anchor_value, rev in cursor.fetchall():
                found.append(
                    CanonicalRow(
                        id=row_id(pk),
                        data=text.encode("utf-8") if isinstance(text, str) else bytes(text),
                        subject=tables.subject(spec.key_kind, row_id(key_value))
                        if spec.key_kind and key_value is not None
                        else None,
                        anchor=row_id(anchor_value) if anchor_value is not None else None,
                        grounding_id=uuid.UUID(row_id(key_value)) if rev is not None else None,
                        revision=rev,
                    )
                )
    return found


def _db_key(key):
    # SQLite stores UUIDs as 32 hex digits; the pending write holds their text.
    if isinstance(key, str) and len(key) == 36:
        try:
            return uuid.UUID(key).hex
        except ValueError:
            return key
    return key.hex if isinstance(key, uuid.UUID) else key


def row_id(value) -> str:
    """A key as the leaf names it: a UUID in its hyphenated form, else its text."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, str) and len(value) == 32:
        try:
            return str(uuid.UUID(hex=value))
        except ValueError:
            return value
    return str(value)
