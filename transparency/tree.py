"""The stored tree of a log: its perfect subtrees (`transparency_node`), read by the
proofs and the sequencer in one statement, and the leaves and nodes the sequencer
writes."""

from __future__ import annotations

from collections.abc import Iterable

import orjson
from django.db import connections
from django.db.models import Q

from common.kernel import compat, cursors
from transparency import merkle
from transparency.models import Leaf, LeafRevision, Node


class TreeMismatch(RuntimeError):
    """The stored tree does not hash to the last signed root: nothing is signed."""


def read_nodes(using: str, log_id: int, wanted: Iterable[merkle.Node]) -> dict:
    """The stored hashes of these perfect subtrees: one statement."""
    wanted = list(set(wanted))
    if not wanted:
        return {}
    connection = connections[using]
    if connection.vendor == "postgresql":
        with cursors.server_bound(connection) as cursor:
            cursor.execute(
                "SELECT n.level, n.position, n.hash FROM transparency_node n "
                "JOIN unnest($1::int[], $2::bigint[]) AS w(level, position) "
                "ON n.level = w.level AND n.position = w.position WHERE n.log_id = $3",
                [[w[0] for w in wanted], [w[1] for w in wanted], log_id],
            )
            return {(lv, pos): bytes(h) for lv, pos, h in cursor.fetchall()}
    where = Q()
    for level, position in wanted:
        where |= Q(level=level, position=position)
    return {
        (lv, pos): bytes(h)
        for lv, pos, h in Node.objects.using(using)
        .filter(where, log_id=log_id)
        .values_list("level", "position", "hash")
    }


def edge(using: str, log_id: int, size: int) -> list[tuple[merkle.Node, bytes]]:
    """The stored right edge (compact range) of the tree of `size` leaves."""
    wanted = merkle.compact_range(size)
    found = read_nodes(using, log_id, wanted)
    missing = [n for n in wanted if n not in found]
    if missing:
        raise TreeMismatch(f"the stored tree lacks nodes {missing[:3]} of its right edge")
    return [(n, found[n]) for n in wanted]


def store(using: str, leaves: list[dict], created: list[tuple[merkle.Node, bytes]], log_id: int):
    """Insert the integrated leaves (and their extra link revisions) and the new nodes."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        made = Leaf.objects.using(using).bulk_create(
            [Leaf(**{k: v for k, v in leaf.items() if k != "revisions"}) for leaf in leaves]
        )
        LeafRevision.objects.using(using).bulk_create(
            [
                LeafRevision(leaf=row, grounding_id=g, revision=r)
                for row, leaf in zip(made, leaves, strict=True)
                for g, r in leaf["revisions"]
            ]
        )
        Node.objects.using(using).bulk_create(
            [Node(log_id=log_id, level=n[0], position=n[1], hash=h) for n, h in created]
        )
        return
    columns = ("log_id", "audit_event", "action", "grounding_id", "revision", "actor_ref", "at",
               "commitments", "key_ids", "index", "leaf", "leaf_hash", "integrated_at")  # fmt: skip
    quote = connection.ops.quote_name
    # COPY: the leaves (their JSON and bytes) stream as rows, nothing quoted into a
    # statement's text.
    with compat.driver_cursor(connection) as raw:
        names = ", ".join(quote(c) for c in columns)
        with raw.copy(f"COPY transparency_leaf ({names}) FROM STDIN") as copy:
            for leaf in leaves:
                copy.write_row([_value(leaf[c]) for c in columns])
        with raw.copy("COPY transparency_node (log_id, level, position, hash) FROM STDIN") as copy:
            for (level, position), digest in created:
                copy.write_row((log_id, level, position, digest))
    extra = [(leaf["index"], g, r) for leaf in leaves for g, r in leaf["revisions"]]
    if extra:
        with cursors.server_bound(connection) as cursor:
            cursor.execute(
                "INSERT INTO transparency_leafrevision (leaf_id, grounding_id, revision) "
                "SELECT l.id, x.g, x.r FROM unnest($1::bigint[], $2::uuid[], $3::int[]) "
                'AS x(i, g, r) JOIN transparency_leaf l ON l.log_id = $4 AND l."index" = x.i',
                [[e[0] for e in extra], [e[1] for e in extra], [e[2] for e in extra], log_id],
            )


def _value(value):
    # JSON values travel as their text, cast by the statement.
    return orjson.dumps(value).decode() if isinstance(value, list) else value
