"""The one statement that queues a write's leaves on PostgreSQL.

Given the write's events and the keys of the committed rows it stored, the database
reads each row's canonical bytes (`record_send(ROW(columns))`), finds or creates the
record key of its link, passage or log (`gen_random_bytes`, kept apart in
`transparency_recordkey`), computes `hmac(row, key, 'sha256')` (pgcrypto), groups
the commitments by event and inserts one pending leaf per event, with the link
revisions the write made besides its events' own. One round trip; no row crosses the
wire. The statement is built once per set of tables.

Two writes creating the same key at once (the first write of a Dimension, or of a
link registered before the log existed) cannot see each other's key within one
statement: the statement then inserts nothing and reports the rows without a key,
and is sent again, when the other's key is committed and visible. The same when an
event's Dimension has no log yet (it is created, then the statement sent again).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from policies.kernel import cursors
from transparency import tables

_SELECTS_MAX_RETRIES = 3


def canonical_expression(connection, spec: tables.Committed, alias: str) -> str:
    """SQL for the canonical bytes (PostgreSQL) or text (elsewhere) of a row of `spec`."""
    quote = connection.ops.quote_name
    columns = ", ".join(f"{alias}.{quote(c)}" for c in spec.columns)
    if connection.vendor == "postgresql":
        return f"record_send(ROW({columns}))"
    return f"json_array({columns})"


def queue(connection, pending: Sequence, rows: dict[str, list], anchors: dict[str, int]) -> None:
    from policies.models import Dimension
    from transparency.enqueue import ensure_log

    table_names = tuple(sorted(rows))
    statement = _statement(connection.alias, table_names)
    anchor_texts = list(anchors)
    params: list = [
        [p.n for p in pending],
        [p.dimension for p in pending],
        anchor_texts,
        [anchors[a] for a in anchor_texts],
        *(list(rows[t]) for t in table_names),
        [p.n for p in pending],
        [p.event_id for p in pending],
        [p.action for p in pending],
        [p.grounding_id for p in pending],
        [p.revision for p in pending],
        [p.actor_ref for p in pending],
        [p.at for p in pending],
        len({p.dimension for p in pending}),
    ]
    for _ in range(_SELECTS_MAX_RETRIES):
        with cursors.server_bound(connection) as cursor:
            cursor.execute(statement, params)
            inserted, keyless, logs = cursor.fetchone()
        if inserted == len(pending):
            return
        if logs < params[-1]:
            for name in {p.dimension for p in pending}:
                dimension = Dimension.objects.using(connection.alias).filter(name=name).first()
                if dimension is not None:
                    ensure_log(dimension)
    raise RuntimeError(
        f"the transparency log queued {inserted} leaves of {len(pending)} "
        f"({keyless} rows without a key, {logs} logs)"
    )


@functools.lru_cache(maxsize=128)
def _statement(using: str, table_names: tuple[str, ...]) -> str:
    from django.db import connections

    connection = connections[using]
    quote = connection.ops.quote_name
    selects = []
    for table in table_names:
        spec = tables.get(table)
        pk_type = spec.model._meta.pk.db_type(connection)
        key = (
            f"'{spec.key_kind}:' || h.{quote(spec.key_column)}::text"
            if spec.key_kind
            else "NULL::text"
        )
        anchor = f"h.{quote(spec.anchor_column)}::text" if spec.anchor_column else "NULL::text"
        revision = (
            f"h.{quote(spec.key_column)}::uuid, h.{quote(spec.revision_column)}::int"
            if spec.revision_column
            else "NULL::uuid, NULL::int"
        )
        selects.append(
            f"SELECT '{table}'::text AS t, h.{quote(spec.pk)}::text AS id, {key} AS s, "
            f"{anchor} AS a, {canonical_expression(connection, spec, 'h')} AS x, "
            f"{revision} FROM {quote(table)} h WHERE h.{quote(spec.pk)} = ANY(%s::{pk_type}[])"
        )
    rows_union = " UNION ALL ".join(selects)
    statement = f"""
WITH ev AS (
  SELECT e.n, l.id AS log_id FROM unnest(%s::int[], %s::text[]) AS e(n, dim)
  JOIN policies_dimension d ON d.name = e.dim
  JOIN transparency_log l ON l.dimension_id = d.id
), am AS (
  SELECT * FROM unnest(%s::text[], %s::int[]) AS m(a, n)
), r(t, id, s, a, x, gid, rev) AS (
  {rows_union}
), rs AS (
  SELECT r.*, ev.n, COALESCE(r.s, 'log:' || ev.log_id) AS subj
  FROM r LEFT JOIN am ON am.a = r.a JOIN ev ON ev.n = COALESCE(am.n, 0)
), nk AS (
  INSERT INTO transparency_recordkey (subject, key, created_at)
  SELECT q.subj, gen_random_bytes(32), now() FROM (
    SELECT DISTINCT rs.subj FROM rs WHERE NOT EXISTS (
      SELECT 1 FROM transparency_recordkey k WHERE k.subject = rs.subj AND k.destroyed_at IS NULL)
  ) q
  ON CONFLICT (subject) WHERE destroyed_at IS NULL DO NOTHING
  RETURNING id, subject, key
), k AS (
  SELECT id, subject, key FROM nk
  UNION ALL
  SELECT id, subject, key FROM transparency_recordkey
  WHERE destroyed_at IS NULL AND subject IN (SELECT subj FROM rs)
), c AS (
  SELECT rs.n, rs.t, rs.id, rs.gid, rs.rev, k.id AS kid, hmac(rs.x, k.key, 'sha256') AS h
  FROM rs LEFT JOIN k ON k.subject = rs.subj
), agg AS (
  SELECT n,
    jsonb_agg(jsonb_build_object('table', t, 'row', id, 'hmac', encode(h, 'base64'))
              ORDER BY t, id) AS commitments,
    jsonb_agg(kid ORDER BY t, id) AS key_ids
  FROM c GROUP BY n
), e AS (
  SELECT * FROM unnest(%s::int[], %s::uuid[], %s::text[], %s::uuid[], %s::int[], %s::text[],
                       %s::timestamptz[]) AS e(n, event_id, action, gid, rev, actor, at)
), ins AS (
  INSERT INTO transparency_leaf (log_id, audit_event, action, grounding_id, revision, actor_ref,
                                 at, commitments, key_ids)
  SELECT ev.log_id, e.event_id, e.action, e.gid, e.rev, e.actor, e.at,
         COALESCE(agg.commitments, '[]'::jsonb), COALESCE(agg.key_ids, '[]'::jsonb)
  FROM e JOIN ev ON ev.n = e.n LEFT JOIN agg ON agg.n = e.n
  WHERE NOT EXISTS (SELECT 1 FROM c WHERE c.h IS NULL)
    AND (SELECT count(DISTINCT log_id) FROM ev) = %s
  RETURNING id, audit_event
), lr AS (
  INSERT INTO transparency_leafrevision (leaf_id, grounding_id, revision)
  SELECT ins.id, c.gid, c.rev FROM c JOIN e ON e.n = c.n JOIN ins ON ins.audit_event = e.event_id
  WHERE c.rev IS NOT NULL AND (c.gid, c.rev) IS DISTINCT FROM (e.gid, e.rev)
)
SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM c WHERE c.h IS NULL),
       (SELECT count(DISTINCT log_id) FROM ev)
"""
    return cursors.numbered(statement)
