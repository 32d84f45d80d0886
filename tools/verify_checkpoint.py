#!/usr/bin/env python3
"""Check a grounding registry's transparency log from outside, over HTTP, with nothing
but the standard library (hashlib, urllib) and `cryptography` (Ed25519).

    python tools/verify_checkpoint.py --base https://registry.example.org \\
        --token TOKEN --dimension demo --public-key 'localhost/grounding+1a2b3c4d+AX…' \\
        [--index N | --grounding-id ID --revision N] [--since earlier-checkpoint.txt]

1. fetches GET /api/v1/log/checkpoint and verifies its Ed25519 signature (C2SP signed
   note) with the pinned note verifier key (--public-key; without it the key the server
   publishes at /api/v1/log/public-key is taken on first use, which proves nothing
   against the server itself);
2. fetches a leaf (GET /api/v1/log/entries, the last one by default, or a link
   revision's through GET /api/v1/groundings/{id}/revisions/{n}/proof/), hashes it
   (SHA-256(0x00 ‖ leaf)) and verifies its RFC 9162 inclusion proof against the
   checkpoint's root;
3. with --since, verifies the consistency proof from an earlier checkpoint (a file
   holding its note) to this one: the log only grew.

Exit 0 when everything verifies, 1 otherwise (naming what failed). Shares no code with
the registry.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import ssl
import sys
import urllib.parse
import urllib.request

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


class Failed(Exception):
    pass


def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _children(left: bytes, right: bytes) -> bytes:
    return _sha256(b"\x01" + left + right)


def parse_checkpoint(note: str) -> tuple[str, int, bytes, str, list[tuple[str, bytes]]]:
    """(origin, size, root, signed text, [(key name, signature)])."""
    text, sep, rest = note.partition("\n\n")
    if not sep:
        raise Failed("the checkpoint is not a signed note")
    origin, size, root = text.split("\n")[:3]
    signatures = []
    for line in rest.splitlines():
        if line.startswith("\u2014 "):
            name, _, encoded = line[2:].rpartition(" ")
            signatures.append((name, base64.b64decode(encoded)))
    return origin, int(size), base64.b64decode(root), text + "\n", signatures


def verify_signature(note: str, verifier_key: str) -> tuple[str, int, bytes]:
    name, key_id_hex, encoded = verifier_key.strip().split("+", 2)
    raw = base64.b64decode(encoded)
    if raw[:1] != b"\x01" or len(raw) != 33:
        raise Failed("the verifier key is not an Ed25519 note key")
    key_id = bytes.fromhex(key_id_hex)
    if _sha256(name.encode() + b"\n" + raw)[:4] != key_id:
        raise Failed("the verifier key's id does not match its key")
    origin, size, root, text, signatures = parse_checkpoint(note)
    public = Ed25519PublicKey.from_public_bytes(raw[1:])
    for signer, signature in signatures:
        if signer == name and signature[:4] == key_id:
            try:
                public.verify(signature[4:], text.encode("utf-8"))
            except InvalidSignature as exc:
                raise Failed("the checkpoint's signature does not verify") from exc
            return origin, size, root
    raise Failed("the checkpoint carries no signature of the pinned key")


def verify_inclusion(leaf_hash: bytes, index: int, size: int, proof: list[bytes], root: bytes):
    if index >= size:
        raise Failed("the leaf index is outside the tree")
    fn, sn, h = index, size - 1, leaf_hash
    for p in proof:
        if sn == 0:
            raise Failed("the inclusion proof is too long")
        if fn & 1 or fn == sn:
            h = _children(p, h)
            while not fn & 1 and fn:
                fn, sn = fn >> 1, sn >> 1
        else:
            h = _children(h, p)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0 or h != root:
        raise Failed("the inclusion proof does not lead to the checkpoint's root")


def verify_consistency(first: int, second: int, proof: list[bytes], r1: bytes, r2: bytes):
    if first > second:
        raise Failed("the earlier checkpoint is larger than this one: the log shrank")
    if first == second:
        if proof or r1 != r2:
            raise Failed("two checkpoints of one size with different roots")
        return
    if first == 0:
        return
    if not proof:
        raise Failed("an empty consistency proof")
    if first & (first - 1) == 0:
        proof = [r1, *proof]
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = proof[0]
    for p in proof[1:]:
        if sn == 0:
            raise Failed("the consistency proof is too long")
        if fn & 1 or fn == sn:
            fr, sr = _children(p, fr), _children(p, sr)
            while not fn & 1 and fn:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = _children(sr, p)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0 or fr != r1 or sr != r2:
        raise Failed("the log is not an extension of the earlier checkpoint")


class Client:
    def __init__(self, base: str, token: str | None, cafile: str | None = None) -> None:
        self.base, self.token = base.rstrip("/"), token
        self.context = ssl.create_default_context(cafile=cafile) if cafile else None

    def get(self, path: str, **query) -> bytes:
        url = f"{self.base}{path}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        request = urllib.request.Request(url)
        if self.token:
            request.add_header("Authorization", f"Token {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=30, context=self.context) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            raise Failed(f"GET {path}: {exc.code} {exc.read()[:300]!r}") from exc

    def json(self, path: str, **query) -> dict:
        return json.loads(self.get(path, **query))


def run(args: argparse.Namespace) -> str:
    client = Client(args.base, args.token, args.cafile)
    key = args.public_key or client.get("/api/v1/log/public-key").decode().strip()
    note = client.get("/api/v1/log/checkpoint", dimension=args.dimension).decode()
    origin, size, root = verify_signature(note, key)
    if not origin.endswith(f"/grounding/{args.dimension}"):
        raise Failed(f"the checkpoint is of {origin}, not of {args.dimension}")
    if size == 0:
        return f"{origin}: an empty log, signed"
    if args.grounding_id:
        proof = client.json(
            f"/api/v1/groundings/{args.grounding_id}/revisions/{args.revision}/proof/"
        )
        origin2, size, root = verify_signature(proof["checkpoint"], key)
        index, leaf = proof["index"], base64.b64decode(proof["leaf"])
        hashes = [base64.b64decode(h) for h in proof["hashes"]]
        if proof["tree_size"] != size or origin2 != origin:
            raise Failed("the proof's checkpoint is not the proof's tree")
    else:
        index = size - 1 if args.index is None else args.index
        entries = client.json("/api/v1/log/entries", dimension=args.dimension, start=index,
                              end=index + 1)["entries"]  # fmt: skip
        if not entries or entries[0]["index"] != index:
            raise Failed(f"the log has no entry {index}")
        leaf = base64.b64decode(entries[0]["leaf"])
        proof = client.json("/api/v1/log/proof/inclusion", dimension=args.dimension,
                            index=index, tree_size=size)  # fmt: skip
        hashes = [base64.b64decode(h) for h in proof["hashes"]]
    verify_inclusion(_sha256(b"\x00" + leaf), index, size, hashes, root)
    fields = json.loads(leaf)
    if fields.get("index") != index or fields.get("dimension") != args.dimension:
        raise Failed("the leaf names another index or Dimension")
    done = f"{origin}: checkpoint of {size} signed; leaf {index} ({fields['action']}) included"
    if args.since:
        with open(args.since, encoding="utf-8") as handle:
            _, first, first_root = verify_signature(handle.read(), key)
        consistency = client.json("/api/v1/log/proof/consistency", dimension=args.dimension,
                                  first=first, second=size)  # fmt: skip
        hashes = [base64.b64decode(h) for h in consistency["hashes"]]
        verify_consistency(first, size, hashes, first_root, root)
        done += f"; consistent with the earlier checkpoint of {first}"
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the registry's base URL")
    parser.add_argument("--token", help="an API token of a member of the Dimension")
    parser.add_argument("--dimension", required=True)
    parser.add_argument("--public-key", help="the pinned note verifier key")
    parser.add_argument("--index", type=int, help="the leaf to prove (default: the last)")
    parser.add_argument("--grounding-id", help="prove this link's revision instead")
    parser.add_argument("--revision", type=int, default=1)
    parser.add_argument("--since", help="a file holding an earlier signed checkpoint")
    parser.add_argument("--cafile", help="CA certificates to trust for https (PEM)")
    args = parser.parse_args(argv)
    try:
        print("OK " + run(args))
        return 0
    except (Failed, ValueError, KeyError) as exc:
        print(f"FAILED: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
