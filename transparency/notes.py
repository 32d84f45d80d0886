"""Checkpoints as C2SP signed notes (c2sp.org/signed-note, c2sp.org/tlog-checkpoint),
signed with the operator's Ed25519 key (GROUNDING_LOG_SIGNING_KEY: a base64 32-byte
seed).

    <host>/grounding/<dimension>
    <tree size>
    <base64 root hash>

    — <key name> <base64(key id ‖ Ed25519 signature of the three lines)>

The key name is `<host>/grounding`; its key id is the first four bytes of
SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key); the verifier key, published at
/api/v1/log/public-key, is `<name>+<key id hex>+<base64(0x01 ‖ public key)>`.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

ED25519 = b"\x01"


def host() -> str:
    return settings.GROUNDING_LOG_HOST


def key_name() -> str:
    return f"{host()}/grounding"


def origin(dimension: str) -> str:
    return f"{host()}/grounding/{dimension}"


def parse_seed(value: str) -> bytes:
    """The 32-byte Ed25519 seed a GROUNDING_LOG_SIGNING_KEY holds (base64)."""
    try:
        seed = base64.b64decode(value.strip(), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ImproperlyConfigured("GROUNDING_LOG_SIGNING_KEY must be base64.") from exc
    if len(seed) != 32:
        raise ImproperlyConfigured(
            "GROUNDING_LOG_SIGNING_KEY must hold a 32-byte Ed25519 seed (base64)."
        )
    return seed


@dataclass(frozen=True)
class Signer:
    name: str
    private: Ed25519PrivateKey
    public: bytes

    @property
    def key_id(self) -> bytes:
        return hashlib.sha256(self.name.encode() + b"\n" + ED25519 + self.public).digest()[:4]

    @property
    def verifier_key(self) -> str:
        encoded = base64.b64encode(ED25519 + self.public).decode()
        return f"{self.name}+{self.key_id.hex()}+{encoded}"

    def sign(self, text: str) -> str:
        """The signed note of `text` (which ends in a newline)."""
        signature = self.private.sign(text.encode("utf-8"))
        line = base64.b64encode(self.key_id + signature).decode()
        return f"{text}\n\u2014 {self.name} {line}\n"


@functools.cache
def _signer(seed_text: str, name: str) -> Signer:
    private = Ed25519PrivateKey.from_private_bytes(parse_seed(seed_text))
    public = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return Signer(name=name, private=private, public=public)


def signer() -> Signer:
    seed = settings.GROUNDING_LOG_SIGNING_KEY
    if not seed:
        raise ImproperlyConfigured("GROUNDING_LOG_SIGNING_KEY is not set: no checkpoint is signed.")
    return _signer(seed, key_name())


def checkpoint_text(dimension: str, size: int, root: bytes) -> str:
    return f"{origin(dimension)}\n{size}\n{base64.b64encode(root).decode()}\n"


def sign_checkpoint(dimension: str, size: int, root: bytes) -> str:
    return signer().sign(checkpoint_text(dimension, size, root))
