"""The verifier's reader for SQLite (and any other database but PostgreSQL): one
range of the log through Django's cursor, the audit events by batches of keys, the
committed rows per table as `json_array` of their columns, the keys through the ORM,
and the values normalized to the text the leaf holds (ids, RFC 3339 instants).

Apart from the PostgreSQL reader (`read_pg`), which reads in binary through the
driver and ahead on connections of its own: none of that applies here, and each
reader stays readable beside the statements it sends."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import orjson

from transparency import tables
from transparency.models import RecordKey
from transparency.verifier.chunk import Chunk, Entry, entries, wanted_rows


def read_range(connection, log_id: int, low: int, high: int, commitments: bool) -> Chunk:
    """One range, on Django's connection; with what its commitments name when
    `commitments`."""
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
    wanted, key_ids = wanted_rows(said)
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
