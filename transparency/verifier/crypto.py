"""The verifier's own cryptography: RFC 9162 hashing and proof verification, the
tree's root from its leaves, and C2SP signed notes (hashlib, hmac and cryptography
only; nothing of the write path's `transparency.merkle` or `transparency.notes`)."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

_SIGNATURE_LINE = "\u2014 "


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def hash_leaf(data: bytes) -> bytes:
    return sha256(b"\x00" + data)


def hash_children(left: bytes, right: bytes) -> bytes:
    return sha256(b"\x01" + left + right)


class RootStack:
    """The tree's root as leaves arrive: the perfect subtrees of the right edge."""

    def __init__(self) -> None:
        self.size = 0
        self.stack: list[bytes] = []

    def push(self, leaf: bytes) -> None:
        h, n, stack = leaf, self.size, self.stack
        while n & 1:
            h = hashlib.sha256(b"\x01" + stack.pop() + h).digest()  # hash_children
            n >>= 1
        stack.append(h)
        self.size += 1

    def root(self) -> bytes:
        if not self.stack:
            return sha256(b"")
        h = self.stack[-1]
        for left in reversed(self.stack[:-1]):
            h = hash_children(left, h)
        return h


class NodeStack(RootStack):
    """A RootStack that keeps each inner node of the perfect subtrees as it makes it:
    `levels[k][p]` is the node of level k (k ≥ 1) at position p, the hash the stored
    node must equal; b"" above a leaf whose stored node disagrees with its bytes (or is
    missing), which is not judged again. The tree's inner nodes are hashed once, for
    the root and for the stored subtrees alike."""

    def __init__(self) -> None:
        super().__init__()
        self.clean: list[bool] = []
        self.levels: list[list[bytes]] = [[]]

    def push_leaf(self, leaf: bytes, clean: bool) -> None:
        h, n, stack, flags, levels = leaf, self.size, self.stack, self.clean, self.levels
        level = 0
        while n & 1:
            h = hashlib.sha256(b"\x01" + stack.pop() + h).digest()  # hash_children
            clean = flags.pop() and clean
            level += 1
            if level == len(levels):
                levels.append([])
            levels[level].append(h if clean else b"")
            n >>= 1
        stack.append(h)
        flags.append(clean)
        self.size += 1


# -- RFC 9162 proof verification (C2SP merkle-tree), for clients and tests


def verify_inclusion(
    leaf_hash: bytes, index: int, size: int, proof: list[bytes], root: bytes
) -> bool:
    if index >= size:
        return False
    fn, sn, h = index, size - 1, leaf_hash
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            h = hash_children(p, h)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            h = hash_children(h, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and h == root


def verify_consistency(
    first: int, second: int, proof: list[bytes], first_root: bytes, second_root: bytes
) -> bool:
    if first > second:
        return False
    if first == second:
        return not proof and first_root == second_root
    if first == 0:
        # Every tree extends the empty one, whose root is SHA-256 of nothing.
        return not proof and first_root == sha256(b"")
    if not proof:
        return False
    if first & (first - 1) == 0:
        proof = [first_root, *proof]
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = proof[0]
    for p in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = hash_children(p, fr)
            sr = hash_children(p, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = hash_children(sr, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == first_root and sr == second_root


# -- signed notes


@dataclass(frozen=True)
class Note:
    origin: str
    size: int
    root: bytes
    text: str
    signatures: list[tuple[str, bytes]]


def parse_note(note: str) -> Note:
    text, sep, signatures = note.partition("\n\n")
    if not sep:
        raise ValueError("a signed note needs a blank line before its signatures")
    lines = text.split("\n")
    if len(lines) < 3:
        raise ValueError("a checkpoint has an origin, a size and a root hash")
    sigs = []
    for line in signatures.split("\n"):
        if not line:
            continue
        if not line.startswith(_SIGNATURE_LINE):
            raise ValueError("a signature line starts with an em dash and a space")
        name, _, encoded = line[len(_SIGNATURE_LINE) :].rpartition(" ")
        sigs.append((name, base64.b64decode(encoded, validate=True)))
    return Note(
        lines[0], int(lines[1]), base64.b64decode(lines[2], validate=True), text + "\n", sigs
    )


@dataclass(frozen=True)
class VerifierKey:
    name: str
    key_id: bytes
    public: Ed25519PublicKey

    @classmethod
    def parse(cls, text: str) -> VerifierKey:
        name, key_id, encoded = text.strip().split("+", 2)
        raw = base64.b64decode(encoded, validate=True)
        if raw[:1] != b"\x01" or len(raw) != 33:
            raise ValueError("not an Ed25519 note verifier key")
        if sha256(name.encode() + b"\n" + raw)[:4] != bytes.fromhex(key_id):
            raise ValueError("the key id is not the key's")
        return cls(name, bytes.fromhex(key_id), Ed25519PublicKey.from_public_bytes(raw[1:]))

    def verifies(self, note: Note) -> bool:
        for name, signature in note.signatures:
            if name == self.name and signature[:4] == self.key_id:
                try:
                    self.public.verify(signature[4:], note.text.encode("utf-8"))
                    return True
                except InvalidSignature:
                    return False
        return False
