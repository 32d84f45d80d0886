"""RFC 9162 Merkle tree hashing (SHA-256) over stored perfect subtrees.

A tree of n leaves is stored as its perfect subtrees: node (level, position) is the
hash of leaves [position·2^level, (position+1)·2^level), final once its last leaf
is appended (level 0: the leaf hashes). Any subtree hash a proof needs, of any tree
size, is a fold of O(log n) of them, so a proof is one read of O(log n) rows
(`ranges_needed`, then `range_hash` over what was read), never a rebuild.

This module is the write path's (the sequencer's and the proof server's); the
verifier `transparency.verify` has its own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

EMPTY_ROOT = hashlib.sha256(b"").digest()
Node = tuple[int, int]  # (level, position)


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than n (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def perfect_nodes(lo: int, hi: int) -> list[Node]:
    """The perfect subtrees whose concatenation is leaves [lo, hi), left to right, for
    a range the RFC's recursion produces (lo aligned to the largest of them)."""
    nodes: list[Node] = []
    while lo < hi:
        size = hi - lo
        level = size.bit_length() - 1
        # The largest aligned perfect subtree starting at lo that fits.
        while lo % (1 << level):
            level -= 1
        nodes.append((level, lo >> level))
        lo += 1 << level
    return nodes


def fold(hashes: list[bytes]) -> bytes:
    """The hash of adjacent perfect subtrees (largest first): folded from the right."""
    if not hashes:
        return EMPTY_ROOT
    acc = hashes[-1]
    for h in reversed(hashes[:-1]):
        acc = node_hash(h, acc)
    return acc


def range_hash(lo: int, hi: int, nodes: Mapping[Node, bytes]) -> bytes:
    return fold([nodes[n] for n in perfect_nodes(lo, hi)])


def inclusion_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """The ranges whose hashes are the inclusion proof of leaf `index` in a tree of
    `size` leaves, in proof order (RFC 9162 PATH, leaf to root)."""
    out: list[tuple[int, int]] = []
    lo, hi = 0, size
    while hi - lo > 1:
        k = _split(hi - lo)
        if index - lo < k:
            out.append((lo + k, hi))
            hi = lo + k
        else:
            out.append((lo, lo + k))
            lo = lo + k
    out.reverse()
    return out


def consistency_ranges(first: int, second: int) -> list[tuple[int, int]]:
    """The ranges whose hashes are the consistency proof from `first` to `second`
    leaves (RFC 9162 SUBPROOF), in proof order. Empty when first is 0 or equal."""
    if first == 0 or first >= second:
        return []
    out: list[tuple[int, int]] = []

    def subproof(m: int, lo: int, hi: int, complete: bool) -> None:
        n = hi - lo
        if m == n:
            if not complete:
                out.append((lo, hi))
            return
        k = _split(n)
        if m <= k:
            subproof(m, lo, lo + k, complete)
            out.append((lo + k, hi))
        else:
            subproof(m - k, lo + k, hi, False)
            out.append((lo, lo + k))

    subproof(first, 0, second, True)
    return out


def nodes_for(ranges: Iterable[tuple[int, int]]) -> set[Node]:
    return {node for lo, hi in ranges for node in perfect_nodes(lo, hi)}


def compact_range(size: int) -> list[Node]:
    """The perfect subtrees of a tree of `size` leaves, largest first (its right edge)."""
    return perfect_nodes(0, size)


def append(
    edge: list[tuple[Node, bytes]], size: int, hashes: Iterable[bytes]
) -> tuple[list[tuple[Node, bytes]], list[tuple[Node, bytes]]]:
    """Append leaf hashes to a tree of `size` leaves whose compact range is `edge`
    ((node, hash) largest first): the new compact range and every new perfect node
    (the leaves' own, level 0, included)."""
    edge = list(edge)
    created: list[tuple[Node, bytes]] = []
    position = size
    for value in hashes:
        node, h = (0, position), value
        created.append((node, h))
        level, pos = 0, position
        while pos & 1:
            (_, _), left = edge.pop()
            h = node_hash(left, h)
            level, pos = level + 1, pos >> 1
            created.append(((level, pos), h))
        edge.append(((level, pos), h))
        position += 1
    return edge, created


def root_of(edge: list[tuple[Node, bytes]]) -> bytes:
    return fold([h for _, h in edge])
