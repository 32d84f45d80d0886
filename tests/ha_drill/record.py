"""What the drill checks beyond the soak's invariants (tests/soak/invariants.py): each
acknowledged write's leaf and events, the receiver's deliveries, and the checkpoints
the API served across leader changes (consistency proofs verified with
tools/verify_checkpoint.py's own code, which shares nothing with the registry)."""

from __future__ import annotations

import base64
import importlib.util
import itertools
import json
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field

import psycopg

from tests.ha_drill.receiver import deliveries
from tests.prod_smoke.web import PROJECT
from tests.soak.invariants import WRITES, Check, _check
from tests.soak.load import Op

_spec = importlib.util.spec_from_file_location(
    "verify_checkpoint", PROJECT / "tools" / "verify_checkpoint.py"
)
outside = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(outside)


# -- leaves and events ------------------------------------------------------------------
@dataclass
class Written:
    """Per applied audit event of the drill's requests: its leaf index (None while
    pending) and its events' ids; per event id its (type, subject, sequence)."""

    by_request: dict[str, list[str]] = field(default_factory=dict)  # request → audit events
    leaf: dict[str, int | None] = field(default_factory=dict)  # audit event → leaf index
    events: dict[str, list[str]] = field(default_factory=dict)  # audit event → event ids
    event_keys: dict[str, tuple[str, str, int]] = field(default_factory=dict)
    pending: int = 0  # transparency_pendingwrite rows left


def read_written(conn: psycopg.Connection, request_ids: list[str]) -> Written:
    written = Written()
    rows = conn.execute(
        "SELECT a.request_id, a.event_id::text, l.index FROM policies_auditevent a "
        "LEFT JOIN transparency_leaf l ON l.audit_event = a.event_id "
        "WHERE a.outcome = 'applied' AND a.request_id = ANY(%s)",
        (request_ids,),
    ).fetchall()
    for request_id, audit_event, index in rows:
        written.by_request.setdefault(request_id, []).append(audit_event)
        written.leaf[audit_event] = index
    for audit_event, event_id, kind, subject, sequence in conn.execute(
        "SELECT audit_event_id::text, event_id::text, type, subject, sequence FROM feed_event "
        "WHERE audit_event_id = ANY(%s::uuid[])",
        (list(written.leaf),),
    ):
        written.events.setdefault(audit_event, []).append(event_id)
        written.event_keys[event_id] = (kind, subject, sequence)
    written.pending = conn.execute("SELECT count(*) FROM transparency_pendingwrite").fetchone()[0]
    return written


def committed_attempts(ops: list[Op], written: Written) -> dict[str, str]:
    """Acknowledged write op key → the request id of its committed attempt."""
    found = {}
    for op in ops:
        if op.kind in WRITES and op.ok:
            for attempt in op.attempts:
                if attempt.request_id in written.by_request:
                    found[op.key] = attempt.request_id
    return found


def leaves_and_events(ops: list[Op], written: Written) -> Check:
    """Every acknowledged write: each of its applied audit events has a leaf in the log
    and one event per link it names (a bulk: one per item)."""
    offenders = []
    committed = committed_attempts(ops, written)
    leaves = events = 0
    for op in ops:
        if op.kind not in WRITES or not op.ok:
            continue
        request_id = committed.get(op.key)
        if request_id is None:
            offenders.append(f"{op.kind} {op.key}: acknowledged, no applied audit event")
            continue
        audit_events = written.by_request[request_id]
        for audit_event in audit_events:
            if written.leaf.get(audit_event) is None:
                offenders.append(f"{op.kind} {op.key}: audit event {audit_event} has no leaf")
            else:
                leaves += 1
        count = sum(len(written.events.get(a, [])) for a in audit_events)
        expected = op.items if op.kind == "bulk" else 1
        if count != expected:
            offenders.append(f"{op.kind} {op.key}: {count} events, expected {expected}")
        events += count
    return _check(
        "every acknowledged write has its audit event, its leaf and its events",
        offenders,
        f"{len(committed)} acknowledged writes: {leaves} leaves, {events} events",
    )


def delivered_ids(journal) -> set[str]:
    """The event ids the receiver got."""
    return {json.loads(delivery["body"])["id"] for delivery in deliveries(journal)}


def delivered(written: Written, journal) -> tuple[Check, dict]:
    """Every event of the drill's writes at the receiver; no (type, subject, sequence)
    under two event ids. The check, and figures."""
    received = deliveries(journal)
    by_id: dict[str, int] = defaultdict(int)
    keys: dict[tuple, set[str]] = defaultdict(set)
    for delivery in received:
        body = json.loads(delivery["body"])
        by_id[body["id"]] += 1
        keys[(body["type"], body["subject"], body["sequence"])].add(body["id"])
    offenders = [f"event {e} {k} never delivered" for e, k in written.event_keys.items()
                 if e not in by_id]  # fmt: skip
    offenders += [f"{key} delivered under ids {sorted(ids)}" for key, ids in keys.items()
                  if len(ids) > 1]  # fmt: skip
    again = sum(n - 1 for n in by_id.values())
    figures = {"deliveries": len(received), "events": len(by_id), "redelivered": again}
    return (
        _check(
            "every event delivered, none under two ids",
            offenders,
            f"{len(written.event_keys)} events of the drill's writes all delivered; the "
            f"receiver got {len(received)} deliveries of {len(by_id)} events "
            f"({again} delivered again under the same id)",
        ),
        figures,
    )


# -- checkpoints ------------------------------------------------------------------------
class Checkpoints:
    """Polls GET /api/v1/log/checkpoint on a thread; keeps every distinct note with
    when it was first seen."""

    def __init__(self, base: str, token: str, cafile: str, dimension: str = "demo") -> None:
        self.client = outside.Client(base, token, cafile)
        self.dimension = dimension
        self.seen: list[tuple[float, str]] = []
        self.errors = 0
        self.retried = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        known: set[str] = set()
        while not self.stop.wait(0.25):
            try:
                note = self.client.get("/api/v1/log/checkpoint", dimension=self.dimension)
            except Exception:  # a failover answers 503 for a moment
                self.errors += 1
                continue
            text = note.decode()
            if text not in known:
                known.add(text)
                self.seen.append((time.monotonic(), text))

    def answer(self, path: str, **query) -> dict:
        """GET as a client does: a 503 (a connection the app lost to a member that
        changed role; it says Retry-After) is asked again, a few times."""
        for _ in range(10):
            try:
                return self.client.json(path, dimension=self.dimension, **query)
            except outside.Failed as error:
                if ": 503 " not in str(error):
                    raise
                self.retried += 1
                time.sleep(1)
        return self.client.json(path, dimension=self.dimension, **query)

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)

    def verify(self, key: str, changes: list[tuple[str, float]]) -> Check:
        """Each note's signature; the chain of every distinct size consistent with the
        next; and across each change (label, when), every note first seen after it
        consistent with the last and the first seen before it."""
        offenders: list[str] = []
        notes: dict[int, tuple[bytes, float]] = {}
        for seen_at, note in list(self.seen):
            try:
                _, size, root = outside.verify_signature(note, key)
            except outside.Failed as error:
                offenders.append(f"checkpoint first seen at {seen_at:.1f}: {error}")
                continue
            if size in notes and notes[size][0] != root:
                offenders.append(f"two checkpoints of size {size} with different roots")
            notes.setdefault(size, (root, seen_at))
        proofs = 0

        def consistent(first: int, second: int) -> None:
            nonlocal proofs
            if first >= second:
                return
            proof = self.answer("/api/v1/log/proof/consistency", first=first, second=second)
            hashes = [base64.b64decode(h) for h in proof["hashes"]]
            try:
                outside.verify_consistency(first, second, hashes, notes[first][0],
                                           notes[second][0])  # fmt: skip
            except outside.Failed as error:
                offenders.append(f"{first} → {second}: {error}")
            proofs += 1

        sizes = sorted(notes)
        for first, second in itertools.pairwise(sizes):
            consistent(first, second)
        for label, when in changes:
            before = sorted(s for s in sizes if notes[s][1] < when)
            after = sorted(s for s in sizes if notes[s][1] >= when)
            if not before or not after:
                offenders.append(f"{label}: no checkpoint seen on each side of it")
                continue
            for size in after:
                consistent(before[-1], size)
                consistent(before[0], size)
        return _check(
            "every checkpoint signed after a leader change consistent with every one before",
            offenders,
            f"{len(notes)} checkpoints (sizes {sizes[0] if sizes else '-'}.."
            f"{sizes[-1] if sizes else '-'}), {proofs} consistency proofs verified over "
            f"the API across {', '.join(label for label, _ in changes)} ({self.retried} "
            "asked again after a 503)",
        )
