"""The least a verifier of the transparency log must do, as plain loops: the limits
`log_verify` and `log_verify_tree` divide `verify_log` by (#37).

- `must_do`: read the leaves and every committed row and record key their
  commitments name, hash each leaf and HMAC each row (comparing the HMAC with the
  leaf's), in one loop over ranges of indexes on one connection. What `verify_log`
  does beyond it (parsing each leaf against its row and audit event, the level-0
  nodes, the subtrees, the checkpoints' signatures, the withheld and destroyed keys'
  accounting) is the verifier's own cost.
- `tree_hashed`: read the leaves and the tree's stored nodes, hash each leaf and every
  inner node of the tree over them (RFC 9162), in a loop.
- `leaves_hashed`: the leaves alone read and hashed (the baseline before #37, which
  left out the rows the verifier must read; context only).

Each takes a function opening a plain psycopg connection and the log's id, and
returns how many leaves it went through.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable

import orjson

RANGE = 2000  # indexes per read, as the verifier reads them

_LEAVES = (
    "SELECT leaf, commitments::text, key_ids::text FROM transparency_leaf "
    'WHERE log_id = %s AND "index" >= %s AND "index" < %s ORDER BY "index"'
)


def leaves_hashed(connect: Callable, log_id: int) -> int:
    count = 0
    with connect() as conn, conn.cursor(binary=True) as cursor:
        cursor.execute(
            'SELECT leaf FROM transparency_leaf WHERE log_id = %s AND "index" IS NOT NULL '
            'ORDER BY "index"',
            (log_id,),
        )
        for (leaf,) in cursor:
            hashlib.sha256(b"\x00" + leaf).digest()
            count += 1
    return count


def tree_hashed(connect: Callable, log_id: int) -> int:
    level: list[bytes] = []
    with connect() as conn, conn.cursor(binary=True) as cursor:
        cursor.execute(
            'SELECT leaf FROM transparency_leaf WHERE log_id = %s AND "index" IS NOT NULL '
            'ORDER BY "index"',
            (log_id,),
        )
        level = [hashlib.sha256(b"\x00" + leaf).digest() for (leaf,) in cursor]
        cursor.execute("SELECT hash FROM transparency_node WHERE log_id = %s", (log_id,))
        stored = sum(1 for _ in cursor)
    count = len(level)
    while len(level) > 1:  # each inner node once; an odd last node rises as it is
        inner = [
            hashlib.sha256(b"\x01" + level[i] + level[i + 1]).digest()
            for i in range(0, len(level) - 1, 2)
        ]
        level = inner + level[len(level) - len(level) % 2 :]
    assert stored >= count or count == 0, "fewer stored nodes than leaves"
    return count


def _rows_sql(conn) -> dict[str, str]:
    """{committed table: SELECT (key text, record_send of its columns) by an array of
    keys}, the columns as the log declares them (transparency.tables)."""
    from django.db import connection

    from transparency import tables

    quote = connection.ops.quote_name
    out = {}
    for table, spec in tables.committed().items():
        columns = ", ".join(f"h.{quote(c)}" for c in spec.columns)
        cast = spec.model._meta.pk.db_type(connection)
        out[table] = (
            f"SELECT h.{quote(spec.pk)}::text, record_send(ROW({columns})) FROM {quote(table)} h "
            f"WHERE h.{quote(spec.pk)} = ANY(%s::text[]::{cast}[])"
        )
    return out


def must_do(connect: Callable, log_id: int) -> int:
    count = checked = 0
    with connect() as conn, conn.cursor(binary=True) as cursor:
        statements = _rows_sql(conn)
        cursor.execute('SELECT max("index") FROM transparency_leaf WHERE log_id = %s', (log_id,))
        last = cursor.fetchone()[0]
        for low in range(0, (last or -1) + 1, RANGE):
            cursor.execute(_LEAVES, (log_id, low, low + RANGE))
            leaves = [(leaf, orjson.loads(c), orjson.loads(k)) for leaf, c, k in cursor.fetchall()]
            wanted: dict[str, list[str]] = {}
            key_ids: set[int] = set()
            for _, said, keys in leaves:
                for c in said:
                    wanted.setdefault(c["table"], []).append(c["row"])
                key_ids.update(keys)
            rows = {}
            for table, ids in wanted.items():
                cursor.execute(statements[table], (ids,))
                rows[table] = dict(cursor.fetchall())
            cursor.execute(
                "SELECT id, key FROM transparency_recordkey WHERE id = ANY(%s)", (list(key_ids),)
            )
            keys = {k: bytes(v) for k, v in cursor.fetchall() if v is not None}
            for leaf, said, ids in leaves:
                hashlib.sha256(b"\x00" + leaf).digest()
                for c, key_id in zip(said, ids, strict=False):
                    key = keys.get(key_id)
                    if key is not None:
                        made = hmac.digest(key, rows[c["table"]][c["row"]], "sha256")
                        checked += made == base64.b64decode(c["hmac"])
                count += 1
    return count
