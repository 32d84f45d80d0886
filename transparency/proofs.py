"""What the log answers: checkpoints, entries, inclusion and consistency proofs.

Readable by the Dimension's members only: the log is looked up among the caller's
Dimensions, so another Dimension's log is `not_found` by the same statement as an
unknown one, and none of its sizes is ever compared with the query. Sizes out of
range, negative, not integers or inconsistent are 400 `validation_error` naming the
query parameter (`/tree_size`, …). Every proof reads the O(log n) stored perfect
subtrees it needs in one statement (`transparency.merkle`).
"""

from __future__ import annotations

import base64
import uuid
from typing import Any

from django.conf import settings

from common.kernel import compat
from common.kernel.refusals import Offender, Refusal
from policies.memberships import memberships
from transparency import merkle, notes, sequencer
from transparency.models import Checkpoint, Leaf, LeafRevision, Log

# At most this many entries per page.
ENTRIES_MAX = 1000
NO_SUCH_LOG = "no Dimension of that name has a log you can read."
# A Dimension's name: its column's length.
_NAME_MAX = 63
# Query integers: ASCII digits, at most 18 of them (a bigint).
MAX_DIGITS = 18  # the schema's maximum: 10^18 - 1
# A size the log has not reached (yet): a rule of the log's state, not of the query.
BEYOND = "beyond_log_size"


def b64(data: bytes) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def log_for(actor, name: Any) -> Log:
    """The log of the Dimension `name` among those where `actor` holds a role; with no
    name, of the one Dimension where the actor holds a role (several: 400
    dimension_required, as every route with ?dimension= answers)."""
    if name is not None and not (isinstance(name, str) and 0 < len(name) <= _NAME_MAX):
        raise _bad("dimension", "length", f"dimension is 1 to {_NAME_MAX} characters.")
    held = memberships(actor)
    mine = {pk: held.dimensions[pk].name for pk, roles in held.roles.items() if roles}
    if name is None:
        if len(mine) > 1:
            raise Refusal(
                "dimension_required",
                "name the Dimension (?dimension=): you hold roles in several.",
                offenders=[Offender("/dimension", "required", "dimension is required.")],
            )
        ids = list(mine)
    else:
        ids = [pk for pk, dimension in mine.items() if dimension == name]
    log = Log.objects.select_related("dimension").filter(dimension_id__in=ids).first()
    if log is None:
        raise Refusal("not_found", NO_SUCH_LOG)
    if settings.GROUNDING_LOG_SEQUENCER == "inline":
        # Leaves another process queued (seed_demo, a command) are integrated soon.
        sequencer.poke()
    return log


def log_of(dimension_id: int) -> Log:
    """The log of a Dimension the caller was already found a member of. Its leaf,
    nodes and checkpoints are then read where it was (`compat.stored_on(log)`): a replica
    shows them as the sequencer committed them, together."""
    return Log.objects.select_related("dimension").get(dimension_id=dimension_id)


def size_param(query, name: str, *, default: int | None = None) -> int:
    """A non-negative integer query parameter (400 naming it otherwise)."""
    value = query.get(name)
    if value is None or value == "":
        if default is not None:
            return default
        raise _bad(name, "required", f"{name} is required.")
    if not (isinstance(value, str) and value.isascii() and value.isdigit()):
        raise _bad(name, "type", f"{name} must be a non-negative integer.")
    if len(value) > MAX_DIGITS:
        raise _bad(name, "range", f"{name} is out of range.")
    return int(value)


def _bad(name: str, code: str, detail: str) -> Refusal:
    offender = Offender(f"/{name}", code, detail)
    return Refusal("validation_error", "the query is not valid.", offenders=[offender])


def checkpoint(log: Log) -> str:
    """The latest signed checkpoint (the empty tree's, signed now, before any leaf)."""
    if log.checkpoint:
        return log.checkpoint
    return notes.sign_checkpoint(log.dimension.name, 0, merkle.EMPTY_ROOT)


def checkpoint_of_size(log: Log, size: int) -> str | None:
    if size == log.size:
        return checkpoint(log)
    notes_of = Checkpoint.objects.using(compat.stored_on(log)).filter(log=log, size=size)
    return notes_of.values_list("note", flat=True).first()


def entries(log: Log, start: int, end: int | None) -> dict:
    end = min(start + 100, log.size) if end is None else end
    if start >= log.size and log.size:
        raise _bad("start", BEYOND, f"start must be below the log's size ({log.size}).")
    if end > log.size:
        raise _bad("end", BEYOND, f"end must not exceed the log's size ({log.size}).")
    if end < start:
        raise _bad("end", "inconsistent", "end must not be below start.")
    if end - start > ENTRIES_MAX:
        raise _bad("end", "range", f"at most {ENTRIES_MAX} entries per page.")
    rows = (
        Leaf.objects.using(compat.stored_on(log))
        .filter(log=log, index__gte=start, index__lt=end)
        .order_by("index")
    )
    return {
        "entries": [
            {"index": i, "leaf": b64(data), "leaf_hash": b64(digest)}
            for i, data, digest in rows.values_list("index", "leaf", "leaf_hash")
        ]
    }


def inclusion_hashes(log: Log, index: int, tree_size: int) -> list[bytes]:
    ranges = merkle.inclusion_ranges(index, tree_size)
    nodes = sequencer.read_nodes(compat.stored_on(log), log.pk, merkle.nodes_for(ranges))
    return [merkle.range_hash(lo, hi, nodes) for lo, hi in ranges]


def inclusion(log: Log, index: int, tree_size: int | None) -> dict:
    named, tree_size = tree_size is not None, log.size if tree_size is None else tree_size
    if tree_size > log.size:
        raise _bad("tree_size", BEYOND, f"tree_size must not exceed the log's size ({log.size}).")
    if index >= tree_size:
        if not named:
            raise _bad("index", BEYOND, f"index must be below the log's size ({log.size}).")
        raise _bad("index", "inconsistent", "index must be below tree_size.")
    return {
        "index": index,
        "tree_size": tree_size,
        "hashes": [b64(h) for h in inclusion_hashes(log, index, tree_size)],
        "checkpoint": checkpoint_of_size(log, tree_size),
    }


def consistency(log: Log, first: int, second: int | None) -> dict:
    second = log.size if second is None else second
    if second > log.size:
        raise _bad("second", BEYOND, f"second must not exceed the log's size ({log.size}).")
    if first > second:
        raise _bad("first", "inconsistent", "first must not exceed second.")
    ranges = merkle.consistency_ranges(first, second)
    nodes = sequencer.read_nodes(compat.stored_on(log), log.pk, merkle.nodes_for(ranges))
    return {
        "first": first,
        "second": second,
        "hashes": [b64(merkle.range_hash(lo, hi, nodes)) for lo, hi in ranges],
        "checkpoint": checkpoint_of_size(log, second),
    }


def revision_leaf(log: Log, grounding_id: uuid.UUID, revision: int) -> Leaf | None:
    """The sequenced leaf of the write that made this revision of the link."""
    leaf = (
        Leaf.objects.using(compat.stored_on(log))
        .filter(grounding_id=grounding_id, revision=revision, index__lt=log.size)
        .order_by("index")
        .last()
    )
    if leaf is not None:
        return leaf
    extra = (
        LeafRevision.objects.using(compat.stored_on(log))
        .filter(grounding_id=grounding_id, revision=revision, leaf__index__lt=log.size)
        .select_related("leaf")
        .first()
    )
    return extra.leaf if extra is not None else None


def revision_proof(log: Log, leaf: Leaf) -> dict:
    """The leaf, its inclusion proof and the signed checkpoint it verifies against."""
    return {
        "index": leaf.index,
        "leaf": b64(leaf.leaf),
        "leaf_hash": b64(leaf.leaf_hash),
        "tree_size": log.size,
        "hashes": [b64(h) for h in inclusion_hashes(log, leaf.index, log.size)],
        "checkpoint": checkpoint(log),
    }
