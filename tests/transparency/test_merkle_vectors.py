"""The tree and its proofs against the C2SP merkle test vectors (tests/transparency/
vectors) and an independent Merkle library (pymerkle) on random trees: the write
path's (transparency.merkle) and the verifier's (transparency.verifier) alike."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pymerkle import InmemoryTree

from transparency import merkle
from transparency.verifier import RootStack, verify_consistency, verify_inclusion
from transparency.verifier.crypto import hash_leaf

VECTORS = Path(__file__).parent / "vectors"


def _load(name: str) -> list[dict]:
    return json.loads((VECTORS / name).read_text())


def _b(text: str) -> bytes:
    return base64.b64decode(text)


TREE = _load("merkle_tree.json")
LEAVES = [_b(entry["leaf_hash"]) for entry in TREE]


def _stored(hashes: list[bytes]) -> dict:
    """Every perfect subtree of the tree of these leaf hashes, as the sequencer stores."""
    _, created = merkle.append([], 0, hashes)
    return dict(created)


def test_the_vectors_are_there():
    assert len(TREE) == 16
    assert {len(_load(n)) for n in ("inclusion-valid.json", "consistency-valid.json")} != {0}


@pytest.mark.parametrize("size", range(1, len(TREE) + 1))
def test_leaf_hashes_and_roots_match_the_vectors(size):
    entries = TREE[:size]
    for entry in entries:
        data = entry["leaf_data"].encode()
        assert merkle.leaf_hash(data) == hash_leaf(data) == _b(entry["leaf_hash"])
    hashes = LEAVES[:size]
    edge, _ = merkle.append([], 0, hashes)
    stack = RootStack()
    for h in hashes:
        stack.push(h)
    assert merkle.root_of(edge) == stack.root() == _b(entries[-1]["root_hash"])
    # The root from the stored perfect subtrees, as proofs read them.
    assert merkle.range_hash(0, size, _stored(hashes)) == _b(entries[-1]["root_hash"])


def test_the_empty_tree():
    assert (
        merkle.EMPTY_ROOT
        == RootStack().root()
        == _b("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
    )


@pytest.mark.parametrize("case", _load("inclusion-valid.json"), ids=lambda c: str(c["leaf_index"]))
def test_valid_inclusion_proofs_are_generated_and_verified(case):
    index, size = case["leaf_index"], case["tree_size"]
    path = [_b(h) for h in case["inclusion_path"]]
    nodes = _stored(LEAVES[:size])
    made = [merkle.range_hash(lo, hi, nodes) for lo, hi in merkle.inclusion_ranges(index, size)]
    assert made == path
    assert verify_inclusion(_b(case["leaf_hash"]), index, size, path, _b(case["root_hash"]))


@pytest.mark.parametrize("case", _load("inclusion-invalid.json"), ids=lambda c: c["comment"])
def test_invalid_inclusion_proofs_are_rejected(case):
    path = [_b(h) for h in case["inclusion_path"]]
    assert not verify_inclusion(
        _b(case["leaf_hash"]), case["leaf_index"], case["tree_size"], path, _b(case["root_hash"])
    )


@pytest.mark.parametrize(
    "case", _load("consistency-valid.json"), ids=lambda c: f"{c['old_size']}-{c['new_size']}"
)
def test_valid_consistency_proofs_are_generated_and_verified(case):
    old, new = case["old_size"], case["new_size"]
    path = [_b(h) for h in case["consistency_path"]]
    nodes = _stored(LEAVES[:new])
    made = [merkle.range_hash(lo, hi, nodes) for lo, hi in merkle.consistency_ranges(old, new)]
    assert made == path
    assert verify_consistency(old, new, path, _b(case["old_root"]), _b(case["new_root"]))


@pytest.mark.parametrize("case", _load("consistency-invalid.json"), ids=lambda c: c["comment"])
def test_invalid_consistency_proofs_are_rejected(case):
    path = [_b(h) for h in case["consistency_path"]]
    assert not verify_consistency(
        case["old_size"], case["new_size"], path, _b(case["old_root"]), _b(case["new_root"])
    )


@settings(max_examples=60, deadline=None)
@given(
    leaves=st.lists(st.binary(max_size=40), min_size=1, max_size=70),
    data=st.data(),
)
def test_random_trees_agree_with_pymerkle(leaves, data):
    reference = InmemoryTree(algorithm="sha256")
    for leaf in leaves:
        reference.append_entry(leaf)
    hashes = [merkle.leaf_hash(leaf) for leaf in leaves]
    nodes = _stored(hashes)
    stack = RootStack()
    for size, h in enumerate(hashes, 1):
        stack.push(h)
        root = reference.get_root(size)
        assert stack.root() == root
        assert merkle.range_hash(0, size, nodes) == root
    size = data.draw(st.integers(1, len(leaves)), label="size")
    index = data.draw(st.integers(0, size - 1), label="index")
    # pymerkle's path is the leaf's own hash, then the RFC 9162 path (1-based indexes).
    theirs = [
        bytes.fromhex(h) for h in reference.prove_inclusion(index + 1, size).serialize()["path"]
    ]
    ours = [merkle.range_hash(lo, hi, nodes) for lo, hi in merkle.inclusion_ranges(index, size)]
    assert theirs == [hashes[index], *ours]
    assert verify_inclusion(hashes[index], index, size, ours, reference.get_root(size))
    first = data.draw(st.integers(0, size), label="first")
    proof = [merkle.range_hash(lo, hi, nodes) for lo, hi in merkle.consistency_ranges(first, size)]
    first_root = reference.get_root(first) if first else merkle.EMPTY_ROOT
    assert verify_consistency(first, size, proof, first_root, reference.get_root(size))
    if proof:  # a tampered proof fails
        bad = [bytes(32), *proof[1:]]
        assert not verify_consistency(first, size, bad, first_root, reference.get_root(size))


@settings(max_examples=120, deadline=None)
@given(
    clean=st.lists(st.booleans(), min_size=0, max_size=70),
)
def test_the_verifier_s_nodes_are_each_level_of_the_tree_above_clean_leaves(clean):
    """NodeStack keeps the perfect subtrees' nodes as it makes the root: level by level
    they are the pairs' hashes (RFC 9162) of the level below, b"" above any leaf marked
    unclean; and its root is RootStack's."""
    from transparency.verifier.crypto import NodeStack, hash_children

    leaves = [hash_leaf(bytes([n % 256, n // 256])) for n in range(len(clean))]
    nodes, plain = NodeStack(), RootStack()
    for leaf, ok in zip(leaves, clean, strict=True):
        nodes.push_leaf(leaf, ok)
        plain.push(leaf)
    assert (nodes.size, nodes.root()) == (plain.size, plain.root())
    below, level = [h if ok else b"" for h, ok in zip(leaves, clean, strict=True)], 1
    while len(below) >= 2:
        here = [
            hash_children(below[2 * i], below[2 * i + 1]) if below[2 * i] and below[2 * i + 1]
            else b""
            for i in range(len(below) // 2)
        ]  # fmt: skip
        assert nodes.levels[level] == here
        below, level = here, level + 1
    assert len(nodes.levels) == level
