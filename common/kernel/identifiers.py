"""Time-ordered identifiers (UUIDv7, RFC 9562) assigned by this registry.

Identity is never derived from URLs, dates or content digests; the timestamp in a
UUIDv7 only orders ids, it carries no meaning.
"""

import os
import threading
import time
import uuid
from typing import Any

_lock = threading.Lock()
_last_ms = 0
_counter = 0
# Random bits are drawn from the OS in blocks: one getrandom() per id was most of the
# cost of an id (two system calls each), and a bulk write assigns thousands.
_POOL_BYTES = 4096
_pool = b""
_pool_at = 0


def _random_bytes(n: int) -> bytes:
    """`n` bytes from the OS's CSPRNG, served from a block (call with `_lock` held)."""
    global _pool, _pool_at
    if _pool_at + n > len(_pool):
        _pool, _pool_at = os.urandom(_POOL_BYTES), 0
    chunk = _pool[_pool_at : _pool_at + n]
    _pool_at += n
    return chunk


def _forget_pool() -> None:
    # A forked worker must not replay its parent's unused random bits.
    global _pool, _pool_at
    _pool, _pool_at = b"", 0


os.register_at_fork(after_in_child=_forget_pool)


def uuid7() -> uuid.UUID:
    """Return a UUIDv7 that is monotonic within this process."""
    global _last_ms, _counter
    with _lock:
        now_ms = time.time_ns() // 1_000_000
        if now_ms <= _last_ms:
            # Same (or earlier) millisecond: keep order with a 12-bit counter.
            _counter += 1
            if _counter > 0xFFF:
                _last_ms += 1
                _counter = 0
            now_ms = _last_ms
        else:
            _last_ms = now_ms
            _counter = int.from_bytes(_random_bytes(2), "big") & 0x7FF
        counter = _counter
        rand_b = int.from_bytes(_random_bytes(8), "big") & ((1 << 62) - 1)
    value = (now_ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= counter << 64
    value |= 0b10 << 62
    value |= rand_b
    return uuid.UUID(int=value)


def parse_uuid(value: Any) -> uuid.UUID | None:
    """The UUID a value spells (a UUID, or its text in any form `uuid.UUID` reads), else
    None: the one parse of an id taken from a path, a query or a form."""
    if isinstance(value, uuid.UUID):
        return value
    if value is None:
        return None
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None
