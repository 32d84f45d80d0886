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
leaf; and, given a checkpoint kept outside the database (`--checkpoint`), that the
log extends it or, when the checkpoint is of a longer log, that this log is behind it
(proved by a consistency proof from this log's size, when one is given) and not a
rewrite (docs/transparency.md "Verifying a restored database").
"""

from __future__ import annotations

import base64
from hashlib import sha256 as _sha256

import orjson
from django.db import router

from transparency.choices import Finding
from transparency.models import Checkpoint, Leaf, Log
from transparency.verifier import read
from transparency.verifier.checks import (
    check_audit,
    check_commitments,
    check_destroyed_keys,
    check_nodes,
    queued_events,
    stored_nodes,
    unlogged_events,
)
from transparency.verifier.chunk import entries
from transparency.verifier.crypto import (
    NodeStack,
    Note,
    VerifierKey,
    parse_note,
    sha256,
    verify_consistency,
)
from transparency.verifier.report import Problem, Report


def verify(
    dimension: str,
    *,
    verifier_key: str,
    since: str | None = None,
    proof: dict | None = None,
    commitments: bool = True,
    using: str | None = None,
) -> Report:
    """`since`: a signed checkpoint kept outside the database (earlier or later);
    `proof`: a consistency proof (as GET /api/v1/log/proof/consistency serves it)
    from this log's size to that checkpoint's, when the checkpoint is beyond it."""
    using = using or router.db_for_read(Leaf)
    key = VerifierKey.parse(verifier_key)
    log = Log.objects.using(using).select_related("dimension").get(dimension__name=dimension)
    report = Report(dimension=dimension, size=log.size)
    earlier = _earlier(report, key, since, dimension)
    checkpoints = _checkpoints(report, key, log, using)
    with read.beside(using) as later:
        # Read on connections of their own while the walk goes on, when it may.
        nodes, unlogged = later(stored_nodes, log, using), later(unlogged_events, log, using)
        stack, disposals = _walk(report, log, using, commitments, earlier, checkpoints)
        check_nodes(report, stack.levels, nodes())
        check_destroyed_keys(report, disposals)
        check_audit(report, unlogged())
    report.pending = len(queued_events(using))
    if earlier is not None and earlier.size > log.size:
        _behind(report, earlier, proof, log.size, stack.root())
    return report


def _walk(
    report: Report,
    log: Log,
    using: str,
    commitments: bool,
    earlier: Note | None,
    roots_wanted: dict[int, bytes],
) -> tuple[NodeStack, set[str]]:
    """Every leaf in index order: its hash, its stored level-0 node, its fields (unless
    the database vouched for them), its commitments; the roots of the signed sizes.
    Returns the tree the leaves make and the disposals the log records."""
    dimension = report.dimension
    earlier_size = earlier.size if earlier is not None else None
    stack = NodeStack()
    disposals: set[str] = set()
    for chunk in read.chunks(log.pk, using, commitments, dimension):
        compare = not chunk.vouched
        for index, data, stored_hash, node_hash, row in chunk.leaves:
            while stack.size < index:  # a gap: the missing leaf
                report.problems.append(
                    Problem(Finding.LEAF_MISSING, "no leaf has this index", index=stack.size)
                )
                stack.push_leaf(sha256(b"missing"), False)
            data = bytes(data)
            digest = _sha256(b"\x00" + data).digest()  # RFC 9162 leaf hash
            if stored_hash is None or digest != stored_hash:
                report.problems.append(
                    Problem(Finding.LEAF_HASH, "its bytes do not hash to its stored hash", index)
                )
            if node_hash is None or digest != node_hash:
                report.problems.append(
                    Problem(Finding.TREE, "the stored leaf node is not its bytes' hash", index)
                )
            if compare:
                _check_fields(report, index, data, row, dimension)
            if row["action"] == "dispose":
                disposals.update(
                    pk
                    for table, pk, _, _ in entries(row["commitments"], [])
                    if table == "grounding_disposal" and pk is not None
                )
            # Above a leaf whose node disagrees, the stored nodes are not judged again.
            stack.push_leaf(digest, digest == node_hash)
            report.leaves += 1
            size = stack.size
            if size == earlier_size and stack.root() != earlier.root:
                report.problems.append(
                    Problem(
                        Finding.CONSISTENCY,
                        f"the first {stack.size} leaves do not hash to the checkpoint's root: "
                        "the log was rewritten since (at or before this index)",
                        index=stack.size - 1,
                    )
                )
            if size in roots_wanted and stack.root() != roots_wanted[size]:
                report.problems.append(
                    Problem(
                        Finding.ROOT,
                        f"the first {stack.size} leaves do not hash to the signed root of that "
                        "size",
                        index=stack.size - 1,
                    )
                )
        if commitments:
            check_commitments(report, chunk)
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
    return stack, disposals


def _behind(report: Report, later: Note, proof: dict | None, size: int, root: bytes) -> None:
    """This log is shorter than the checkpoint: an earlier state of it (a restore to an
    earlier point) or a rewrite. Its leaves cannot rebuild the checkpoint's tree, so
    only a consistency proof from its size to the checkpoint's tells them apart: it
    verifies, or the log is not a prefix of that tree (rewritten). Without one, a log
    that verifies against its own checkpoints is reported behind, not proved."""
    if proof is not None:
        hashes = [base64.b64decode(h) for h in proof.get("hashes", [])]
        if (proof.get("first"), proof.get("second")) != (size, later.size):
            report.problems.append(
                Problem(
                    Finding.CONSISTENCY,
                    f"the consistency proof is from {proof.get('first')} to "
                    f"{proof.get('second')} leaves; this log holds {size} and the "
                    f"checkpoint is of {later.size}: give the proof of those sizes",
                )
            )
            return
        if not verify_consistency(size, later.size, hashes, root, later.root):
            report.problems.append(
                Problem(
                    Finding.CONSISTENCY,
                    f"the consistency proof from {size} to {later.size} leaves does not "
                    f"verify: this log's {size} leaves are not a prefix of the checkpoint's "
                    "tree: the log was rewritten",
                    index=size - 1 if size else None,
                )
            )
            return
        report.behind_proved = True
    if report.problems:
        return  # a log that disagrees with itself is not an earlier state of anything
    report.behind_by = later.size - size
    how = (
        f"the consistency proof from {size} to {later.size} verifies: this log is a prefix "
        "of the checkpoint's tree"
        if report.behind_proved
        else "not proved: this log verifies against the checkpoints it holds, and no "
        f"consistency proof from {size} to {later.size} leaves was given (--consistency-proof)"
    )
    report.behind = (
        f"the checkpoint is of {later.size} leaves, this log holds {size}: an earlier state "
        f"of the log (a database restored to an earlier point), not a rewrite; {how}"
    )


def _earlier(report: Report, key: VerifierKey, since: str | None, dimension: str) -> Note | None:
    if since is None:
        return None
    note = parse_note(since)
    if not key.verifies(note):
        report.problems.append(
            Problem(Finding.SIGNATURE, "the checkpoint's signature does not verify")
        )
    if not note.origin.endswith(f"/grounding/{dimension}"):
        report.problems.append(Problem(Finding.CONSISTENCY, f"the checkpoint is of {note.origin}"))
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


_dumps, _SORTED = orjson.dumps, orjson.OPT_SORT_KEYS
_TOLD = ("action", "grounding_id", "revision", "actor_ref", "at", "dimension")


def _check_fields(report: Report, index: int, data: bytes, row: dict, dimension: str) -> None:
    """The leaf's fields are its row's, and its audit event's (each compared; the
    first that differs is named). A leaf whose bytes are exactly the sorted compact
    JSON of its row's fields (as the leaf is written) holds those fields: it is not
    parsed again (`_found` reads it when they differ)."""
    expected = {
        "dimension": dimension,
        "index": index,
        "action": row["action"],
        "grounding_id": row["grounding_id"],
        "revision": row["revision"],
        "actor_ref": row["actor_ref"],
        "at": row["at"],
        "audit_event": row["audit_event"],
        "commitments": row["commitments"],
    }
    if _dumps(expected, option=_SORTED) == data:
        leaf = expected
    else:
        leaf = _found(report, index, data, expected)
        if leaf is None:
            return
    event = row["event"]
    table = "policies_auditevent"
    if event is None:
        report.problems.append(
            Problem(Finding.AUDIT, "its audit event is gone", index, table, row["audit_event"])
        )
        return
    told = (event["action"], event["grounding_id"], event["revision"], event["actor_ref"],
            event["at"], event["dimension"])  # fmt: skip
    found = tuple(map(leaf.get, _TOLD))
    if found != told:
        name = next(n for n, f, t in zip(_TOLD, found, told, strict=True) if f != t)
        report.problems.append(
            Problem(
                Finding.AUDIT,
                f"its audit event's {name} is not the leaf's",
                index,
                table,
                row["audit_event"],
            )
        )


def _found(report: Report, index: int, data: bytes, expected: dict) -> dict | None:
    """The leaf's fields, read from its bytes, if each is its row's; else None (the
    first that differs reported)."""
    try:
        leaf = orjson.loads(data)
    except orjson.JSONDecodeError:
        leaf = None
    if not isinstance(leaf, dict):
        report.problems.append(Problem(Finding.LEAF_FIELDS, "its bytes are not JSON", index))
        return None
    for name, value in expected.items():
        if leaf.get(name) != value:
            report.problems.append(
                Problem(Finding.LEAF_FIELDS, f"its {name} is not its row's", index)
            )
            return None
    return leaf
