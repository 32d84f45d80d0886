"""Whether each revision of a link is verified by the log (the admin's history page).

A revision is `verified` when the leaf of the write that made it is in the tree (its
inclusion proof, read from the stored subtrees, leads to the root of the latest
checkpoint, whose signature verifies) and the link's history row of that revision
is the one the leaf committed to (its HMAC recomputed with the link's key). It is
`pending` before the sequencer integrated the leaf, `unlogged` when no leaf records
it and no write is queued (a revision older than the log), `withheld` when disposal
destroyed the key (the leaf and its proof stand, the row is no longer checked), and
`failed` otherwise.
The checks are the verifier's own (`transparency.verifier`), not the write path's.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import uuid
from dataclasses import dataclass

from django.db import connections

from common.kernel import compat
from transparency import notes, proofs, tables
from transparency.models import Log, PendingWrite, RecordKey
from transparency.verifier import VerifierKey, parse_note, verify_inclusion
from transparency.verifier.crypto import hash_leaf

LINK_HISTORY = "grounding_historicalgroundinglink"


@dataclass(frozen=True)
class RevisionStatus:
    state: str  # verified, pending, unlogged, withheld, failed
    index: int | None = None
    detail: str = ""


def revision_statuses(log: Log, grounding_id: uuid.UUID, revisions: list[int]) -> dict:
    """{revision: RevisionStatus} for these revisions of the link."""
    using = compat.stored_on(log)
    note = parse_note(proofs.checkpoint(log))
    key = VerifierKey.parse(notes.signer().verifier_key)
    signed = key.verifies(note) and (note.size, note.root) == (log.size, bytes(log.root_hash))
    # Not in the tree yet: a write still queued (or integrated after the log was read).
    queued = PendingWrite.objects.using(using).exists()
    out = {}
    for revision in revisions:
        leaf = proofs.revision_leaf(log, grounding_id, revision)
        if leaf is None:
            out[revision] = RevisionStatus("pending" if queued else "unlogged")
            continue
        out[revision] = _leaf_status(log, leaf, grounding_id, revision, note.root, signed)
    return out


def _leaf_status(log, leaf, grounding_id, revision, root, signed) -> RevisionStatus:
    data = bytes(leaf.leaf)
    digest = hash_leaf(data)
    hashes = proofs.inclusion_hashes(log, leaf.index, log.size)
    if not signed or not verify_inclusion(digest, leaf.index, log.size, hashes, root):
        return RevisionStatus("failed", leaf.index, "the leaf is not in the signed tree")
    row = _row_commitment(log, leaf, grounding_id, revision)
    if row is None:
        return RevisionStatus("failed", leaf.index, "the leaf commits to no row of it")
    commitment, key_id, history_id = row
    key = RecordKey.objects.using(compat.stored_on(log)).filter(pk=key_id).first()
    if key is None:
        return RevisionStatus("failed", leaf.index, "the commitment's key is gone")
    if key.key is None:
        return RevisionStatus("withheld", leaf.index, "its key went with the disposal")
    data = _canonical_row(compat.stored_on(log), history_id)
    if data is None:
        return RevisionStatus("failed", leaf.index, "the revision's history row is gone")
    made = base64.b64encode(hmac.new(bytes(key.key), data, hashlib.sha256).digest()).decode()
    if made != commitment:
        return RevisionStatus("failed", leaf.index, "the history row is not the committed one")
    return RevisionStatus("verified", leaf.index)


def _row_commitment(log, leaf, grounding_id, revision):
    """The leaf's commitment to the link's history row of this revision: (hmac, key
    id, history id); the last one when the write stored several."""
    rows = {str(pk): pk for pk in _history_ids(compat.stored_on(log), grounding_id, revision)}
    found = None
    for c, key_id in zip(leaf.commitments, leaf.key_ids, strict=False):
        if c["table"] == LINK_HISTORY and c["row"] in rows:
            found = (c["hmac"], key_id, rows[c["row"]])
    return found


def _history_ids(using: str, grounding_id: uuid.UUID, revision: int) -> list:
    spec = tables.get(LINK_HISTORY)
    return list(
        spec.model.objects.using(using)
        .filter(grounding_id=grounding_id, revision=revision)
        .values_list("history_id", flat=True)
    )


def _canonical_row(using: str, history_id) -> bytes | None:
    spec = tables.get(LINK_HISTORY)
    connection = connections[using]
    quote = connection.ops.quote_name
    columns = ", ".join(f"h.{quote(c)}" for c in spec.columns)
    expression = (
        f"record_send(ROW({columns}))"
        if connection.vendor == "postgresql"
        else f"json_array({columns})"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {expression} FROM {quote(spec.table)} h WHERE h.{quote(spec.pk)} = %s",
            [history_id],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    return row[0].encode("utf-8") if isinstance(row[0], str) else bytes(row[0])
