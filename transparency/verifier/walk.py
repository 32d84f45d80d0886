"""The log's verifier (`manage.py verify_log`), independent of the write path.

It shares no hashing code with the writers or the sequencer: leaf and node hashes,
the tree's root, RFC 9162 proof verification, HMAC commitments and the signed note
are computed here, with hashlib, hmac and cryptography only. From the database it
reads the stored bytes: leaves, perfect subtrees, checkpoints, keys, and each
committed row's canonical bytes (PostgreSQL's `record_send` of its columns, as
`transparency.tables` names them; SQLite's `json_array`).

What it checks, in index order, naming the first index, table and row that
disagree: every index has its leaf; each leaf's bytes hash to its stored hash and
to the stored level-0 node; its fields are its row's and its audit event's; every
commitment whose key remains equals the HMAC of the row as stored now (and the key
is the row's link's, passage's or log's); a destroyed key was destroyed by a
disposal the log records; the stored perfect subtrees are the leaves'; the root of
every signed checkpoint's size is the checkpoint's; every checkpoint's signature
verifies; every applied audit event of a logged write since the log began has its
leaf; and, given an earlier checkpoint (`--since`), that the log extends it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

from django.db import connections, router

from transparency.choices import Finding
from transparency.models import Checkpoint, Leaf, Log
from transparency.verifier.checks import (
    check_audit,
    check_commitments,
    check_destroyed_keys,
    check_nodes,
)
from transparency.verifier.crypto import Note, RootStack, VerifierKey, hash_leaf, parse_note, sha256
from transparency.verifier.report import Problem, Report

CHUNK = 5000


def verify(
    dimension: str,
    *,
    verifier_key: str,
    since: str | None = None,
    commitments: bool = True,
    using: str | None = None,
) -> Report:
    using = using or router.db_for_read(Leaf)
    key = VerifierKey.parse(verifier_key)
    log = Log.objects.using(using).select_related("dimension").get(dimension__name=dimension)
    report = Report(dimension=dimension, size=log.size)
    earlier = _earlier(report, key, since, dimension)
    checkpoints = _checkpoints(report, key, log, using)
    roots_wanted = dict(checkpoints)
    if earlier is not None and earlier.size <= log.size:
        roots_wanted.setdefault(earlier.size, earlier.root)
    stack = RootStack()
    level0: list[bytes] = []
    disposals: set[str] = set()
    for chunk in _leaf_chunks(log, using):
        for index, data, stored_hash, node_hash, row in chunk:
            while stack.size < index:  # a gap: the missing leaf
                report.problems.append(
                    Problem(Finding.LEAF_MISSING, "no leaf has this index", index=stack.size)
                )
                stack.push(sha256(b"missing"))
                level0.append(b"")
            digest = hash_leaf(bytes(data))
            if stored_hash is None or digest != bytes(stored_hash):
                report.problems.append(
                    Problem(Finding.LEAF_HASH, "its bytes do not hash to its stored hash", index)
                )
            if node_hash is None or digest != bytes(node_hash):
                report.problems.append(
                    Problem(Finding.TREE, "the stored leaf node is not its bytes' hash", index)
                )
            _check_fields(report, index, bytes(data), row, dimension)
            if row["action"] == "dispose":
                disposals.update(
                    c["row"] for c in row["commitments"] if c["table"] == "grounding_disposal"
                )
            stack.push(digest)
            level0.append(digest)
            report.leaves += 1
            if stack.size in roots_wanted and stack.root() != roots_wanted[stack.size]:
                report.problems.append(
                    Problem(
                        Finding.ROOT,
                        f"the first {stack.size} leaves do not hash to the signed root of that "
                        "size",
                        index=stack.size - 1,
                    )
                )
        if commitments:
            check_commitments(report, chunk, using)
    if stack.size < log.size:
        report.problems.append(
            Problem(
                Finding.LEAF_MISSING,
                f"the log holds {stack.size} of its {log.size} leaves",
                index=stack.size,
            )
        )
    if stack.root() != bytes(log.root_hash) and stack.size == log.size:
        report.problems.append(Problem(Finding.ROOT, "the leaves do not hash to the log's root"))
    check_nodes(report, log, level0, using)
    check_destroyed_keys(report, disposals)
    check_audit(report, log, using)
    report.pending = Leaf.objects.using(using).filter(log=log, index__isnull=True).count()
    if earlier is not None and earlier.size > log.size:
        report.behind = (
            f"the earlier checkpoint is of {earlier.size} leaves, this log holds {log.size}: "
            "it is an older state of the log (a database restored from an older dump), not "
            "a rewrite: the checkpoints it holds verify"
        )
    return report


def _earlier(report: Report, key: VerifierKey, since: str | None, dimension: str) -> Note | None:
    if since is None:
        return None
    note = parse_note(since)
    if not key.verifies(note):
        report.problems.append(
            Problem(Finding.SIGNATURE, "the earlier checkpoint's signature does not verify")
        )
    if not note.origin.endswith(f"/grounding/{dimension}"):
        report.problems.append(
            Problem(Finding.CONSISTENCY, f"the earlier checkpoint is of {note.origin}")
        )
    return note


def _checkpoints(report: Report, key: VerifierKey, log: Log, using: str) -> dict[int, bytes]:
    roots: dict[int, bytes] = {}
    notes = list(
        Checkpoint.objects.using(using).filter(log=log).values_list("size", "root_hash", "note")
    )
    if log.checkpoint:
        notes.append((log.size, log.root_hash, log.checkpoint))
    for size, root, text in notes:
        report.checkpoints += 1
        try:
            note = parse_note(text)
        except ValueError as exc:
            report.problems.append(Problem(Finding.SIGNATURE, f"checkpoint {size}: {exc}"))
            continue
        if not key.verifies(note):
            report.problems.append(
                Problem(Finding.SIGNATURE, f"the checkpoint of {size} leaves is not signed")
            )
        if (note.size, note.root) != (size, bytes(root)):
            report.problems.append(
                Problem(Finding.ROOT, f"the checkpoint of {size} leaves says otherwise")
            )
        roots[note.size] = note.root
    return roots


def _leaf_chunks(log: Log, using: str) -> Iterator[list]:
    """(index, bytes, stored hash, level-0 node, leaf row with its audit event) by index."""
    connection = connections[using]
    after = -1
    quote = connection.ops.quote_name
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT l.{quote('index')}, l.leaf, l.leaf_hash, n.hash, l.audit_event, "
                "l.action, l.grounding_id, l.revision, l.actor_ref, l.at, l.commitments, "
                "l.key_ids, a.event_id, a.action, a.grounding_id, a.resulting_revision, "
                "a.actor_ref, a.occurred_at, a.dimension_ref, a.outcome "
                "FROM transparency_leaf l "
                "LEFT JOIN transparency_node n ON n.log_id = l.log_id AND n.level = 0 "
                f"AND n.position = l.{quote('index')} "
                "LEFT JOIN policies_auditevent a ON a.event_id = l.audit_event "
                f"WHERE l.log_id = %s AND l.{quote('index')} > %s "
                f"ORDER BY l.{quote('index')} LIMIT %s",
                [log.pk, after, CHUNK],
            )
            rows = cursor.fetchall()
        if not rows:
            return
        chunk = []
        for r in rows:
            row = {
                "audit_event": _uuid(r[4]), "action": r[5], "grounding_id": _uuid(r[6]),
                "revision": r[7], "actor_ref": r[8], "at": r[9], "commitments": _json(r[10]),
                "key_ids": _json(r[11]),
                "event": None if r[12] is None else {
                    "event_id": _uuid(r[12]), "action": r[13], "grounding_id": _uuid(r[14]),
                    "revision": r[15], "actor_ref": r[16], "at": r[17], "dimension": r[18],
                    "outcome": r[19],
                },
            }  # fmt: skip
            chunk.append((r[0], r[1], r[2], r[3], row))
        yield chunk
        after = rows[-1][0]


def _json(value):
    return json.loads(value) if isinstance(value, str) else value


def _uuid(value) -> str | None:
    if value is None:
        return None
    return str(value if isinstance(value, uuid.UUID) else uuid.UUID(str(value)))


def _rfc3339(value) -> str:
    from datetime import UTC

    return value.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _check_fields(report: Report, index: int, data: bytes, row: dict, dimension: str) -> None:
    try:
        leaf = json.loads(data)
    except ValueError:
        report.problems.append(Problem(Finding.LEAF_FIELDS, "its bytes are not JSON", index))
        return
    expected = {
        "dimension": dimension,
        "index": index,
        "action": row["action"],
        "grounding_id": row["grounding_id"],
        "revision": row["revision"],
        "actor_ref": row["actor_ref"],
        "at": _rfc3339(row["at"]),
        "audit_event": row["audit_event"],
        "commitments": row["commitments"],
    }
    for name, value in expected.items():
        if leaf.get(name) != value:
            report.problems.append(
                Problem(Finding.LEAF_FIELDS, f"its {name} is not its row's", index)
            )
            return
    event = row["event"]
    table = "policies_auditevent"
    if event is None:
        report.problems.append(
            Problem(Finding.AUDIT, "its audit event is gone", index, table, row["audit_event"])
        )
        return
    told = {
        "action": event["action"],
        "grounding_id": event["grounding_id"],
        "revision": event["revision"],
        "actor_ref": event["actor_ref"],
        "at": _rfc3339(event["at"]),
        "dimension": event["dimension"],
    }
    for name, value in told.items():
        if leaf.get(name) != value:
            report.problems.append(
                Problem(
                    Finding.AUDIT,
                    f"its audit event's {name} is not the leaf's",
                    index,
                    table,
                    row["audit_event"],
                )
            )
            return
