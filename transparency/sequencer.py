"""The sequencer: committed pending writes become leaves, the trees grow, and
checkpoints are signed (the Trillian design).

Writes queue a pending write in their own transaction and go on: no write waits for
another's log work. One sequencer at a time (a PostgreSQL advisory lock; elsewhere
the database's write lock, taken first) takes the committed pending writes in queue
order, computes their commitments (`transparency.commitments`), makes one leaf per
event with the next index of its Dimension's log, stores the leaves and the new
perfect subtrees, signs a checkpoint per log that grew and deletes the pending
writes, in one transaction. Before it signs, the stored right edge of a tree must
hash to the root of the last checkpoint signed for it: a checkpoint inconsistent
with an earlier one is never signed.

Who runs it (GROUNDING_LOG_SEQUENCER): `inline`, a thread of each app process woken
after each commit (`poke`, debounced: `make run`); `service`, `manage.py
run_sequencer` (docker-compose, the production smoke). `integrate()` runs it now,
in this thread (tests, commands, disposal before it destroys keys).
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import UTC

from django.core.exceptions import ImproperlyConfigured
from django.db import connections, router, transaction
from django.utils import timezone

from common.kernel import cursors, lost_connection
from common.kernel.canonical import canonical_bytes
from policies.models import AuditEvent, Dimension
from transparency import commitments, merkle, notes, tree
from transparency.models import Checkpoint, Log, PendingWrite
from transparency.tree import TreeMismatch, read_nodes

__all__ = ["TreeMismatch", "integrate", "leaf_bytes", "poke", "read_nodes", "run_forever"]

logger = logging.getLogger("grounding.transparency")

# pg_advisory_xact_lock(namespace, 0): the one sequencer.
LOCK_NAMESPACE = 0x7472  # "tr"
# Events integrated per transaction, at most (a pending write is never split): one
# bulk write of 1,000 links a batch. Beside two bulk writers a write committed while a
# batch is integrated waits for that batch, then its own: batches of 1,000 gave a
# checkpoint lag p99 of 622-719 ms against 1,034-1,230 ms with 5,000 (three runs each,
# docs/performance.md), and a backlog is integrated at about the same pace.
BATCH = 1000
# One sequencer per process at a time (the inline thread, a command, a test).
_local = threading.Lock()


def integrate(dimension: Dimension | str | None = None, *, wait: bool = True) -> int:
    """Integrate every committed pending write now; how many leaves. (`dimension` is
    accepted for callers that think per log: a pending write may span Dimensions, so
    all are integrated.) With `wait=False`, nothing when another sequencer runs."""
    using = router.db_for_write(PendingWrite)
    total = 0
    if not _local.acquire(blocking=wait):
        return 0
    try:
        while True:
            done, more = _integrate_batch(using, wait=wait)
            total += done
            if not more:
                return total
    finally:
        _local.release()


def _integrate_batch(using: str, *, wait: bool) -> tuple[int, bool]:
    connection = connections[using]
    with transaction.atomic(using=using):
        if not _lock(connection, wait):
            return 0, False
        queue = PendingWrite.objects.using(using).order_by("id")
        batch, more = _choose(queue)
        if not batch:
            return 0, False
        chosen = [pk for pk, _ in batch]
        rows = dict(queue.filter(pk__in=chosen).values_list("id", "rows"))
        leaves = _leaves(connection, [(pk, events, rows[pk]) for pk, events in batch])
        _append(using, leaves)
        PendingWrite.objects.using(using).filter(pk__in=chosen).delete()
    return sum(len(v) for v in leaves.values()), more


def _choose(queue) -> tuple[list[tuple[int, list]], bool]:
    """The next batch: the oldest writes, BATCH events at most (one write, whatever its
    size, at least), and whether more are queued. Chosen by the writes' events alone,
    read in pages that double from 8: a backlog of bulk writes (a thousand events
    each) is not read whole to keep one, nor a queue of single registrations one
    page at a time. Their rows (the larger JSON) are read for the chosen ones only."""
    batch: list[tuple[int, list]] = []
    count, page, after = 0, 8, None
    while True:
        rows = list((queue if after is None else queue.filter(pk__gt=after))
                    .values_list("id", "events")[:page])  # fmt: skip
        for pk, events in rows:
            events = _list(events)
            if batch and count + len(events) > BATCH:
                return batch, True
            batch.append((pk, events))
            count += len(events)
        if len(rows) < page:
            return batch, False
        after, page = rows[-1][0], min(2 * page, BATCH)


def _lock(connection, wait: bool) -> bool:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Batches are estimated costly enough for JIT compilation: seconds lost.
            cursor.execute("SET LOCAL jit = off")
            # The commitments statement sorts about four rows an event: a batch is one
            # write at least, and a large one's (5,000 events: ~20,000 rows, ~4 MB)
            # spilled 3 MB to disk with the default 4 MB; in memory with this.
            cursor.execute("SET LOCAL work_mem = '32MB'")
            function = "pg_advisory_xact_lock" if wait else "pg_try_advisory_xact_lock"
            cursor.execute(f"SELECT {function}(%s, 0)", [LOCK_NAMESPACE])
            return wait or bool(cursor.fetchone()[0])
        # SQLite: a write first takes the database's write lock for the transaction.
        cursor.execute("UPDATE transparency_log SET size = size")
        return True


def _leaves(connection, batch: list) -> dict[int, list[dict]]:
    """{log id: [leaf fields]}: every event of the batch, in queue order."""
    using = connection.alias
    batch = [(pk, _list(events), rows) for pk, events, rows in batch]
    found = _events(connection, [e for _, events, _ in batch for e in events])
    logs = _logs(using, {e.dimension_ref for e in found.values()})
    writes, queued = [], []
    for _, events, rows in batch:
        events = [f for f in (_found(found, e) for e in events) if f is not None]
        if not events:
            continue
        start = len(queued)
        queued += events
        order = [
            commitments.Event(start + i, logs[e.dimension_ref].pk, e.grounding_id,
                              e.resulting_revision)
            for i, e in enumerate(events)
        ]  # fmt: skip
        writes.append(commitments.Write(order, _dict(rows), _anchors(events)))
    made = commitments.compute(connection, writes)
    out: dict[int, list[dict]] = {}
    for n, event in enumerate(queued):
        log = logs[event.dimension_ref]
        out.setdefault(log.pk, []).append(
            {
                "log_id": log.pk,
                "audit_event": event.event_id,
                "action": event.action,
                "grounding_id": event.grounding_id,
                "revision": event.resulting_revision,
                "actor_ref": event.actor_ref,
                "at": event.occurred_at,
                "commitments": [
                    {"table": t, "row": r, "hmac": h} for t, r, h, _ in made[n].commitments
                ],
                "key_ids": [k for *_, k in made[n].commitments],
                "revisions": made[n].revisions,
            }
        )
    return out


@dataclass(frozen=True)
class _Event:
    """An applied audit event, as a leaf needs it."""

    event_id: uuid.UUID
    action: str
    grounding_id: uuid.UUID | None
    resulting_revision: int | None
    actor_ref: str
    occurred_at: object
    dimension_ref: str
    import_id: str | None  # its references' import_id, when that is a string


# The queued writes' events, by their ids' text joined by commas (one parameter, split
# by the server: 5,000 ids bound one by one cost the sequencer twice as much), and
# only the import id of their references (the anchor of a WSP import's rows).
_EVENTS = (
    "SELECT event_id, action, grounding_id, resulting_revision, actor_ref, occurred_at, "
    "dimension_ref, CASE WHEN jsonb_typeof(\"references\"->'import_id') = 'string' "
    "THEN \"references\"->>'import_id' END FROM policies_auditevent "
    "WHERE event_id = ANY(string_to_array($1, ',')::uuid[])"
)


def _events(connection, ids: list[str]) -> dict[str, _Event]:
    """{event id as text: the event} of these ids (the text the pending writes hold)."""
    if not ids:
        return {}
    if connection.vendor == "postgresql":
        with cursors.server_bound(connection) as cursor:
            cursor.execute(_EVENTS, [",".join(ids)])
            rows = cursor.fetchall()
    else:
        rows = [
            (*row[:7], _import_id(row[7]))
            for row in AuditEvent.objects.using(connection.alias)
            .filter(event_id__in=[uuid.UUID(e) for e in ids])
            .values_list("event_id", "action", "grounding_id", "resulting_revision",
                         "actor_ref", "occurred_at", "dimension_ref", "references")
        ]  # fmt: skip
    return {str(row[0]): _Event(*row) for row in rows}


def _found(found: dict[str, _Event], event_id: str) -> _Event | None:
    """The event a pending write names by this text (a UUID's in any spelling)."""
    event = found.get(event_id)
    return event if event is not None else found.get(str(uuid.UUID(event_id)))


def _import_id(references) -> str | None:
    imported = (references or {}).get("import_id") if isinstance(references, dict) else None
    return imported if isinstance(imported, str) else None


def _list(value) -> list:
    return json.loads(value) if isinstance(value, str) else value


def _dict(value) -> dict:
    return json.loads(value) if isinstance(value, str) else value


def _logs(using: str, names: set[str]) -> dict[str, Log]:
    from transparency.enqueue import ensure_log

    logs = {
        log.dimension.name: log
        for log in Log.objects.using(using)
        .select_related("dimension")
        .filter(dimension__name__in=names)
    }
    for name in names - logs.keys():
        logs[name] = ensure_log(Dimension.objects.using(using).get(name=name))
    return logs


def _anchors(events) -> dict[str, int]:
    """Which event a row of a write belongs to, by the text of its anchor column: the
    event's own id, its link, or its WSP import."""
    anchors: dict[str, int] = {}
    for n, event in enumerate(events):
        anchors.setdefault(str(event.event_id), n)
        if event.grounding_id:
            anchors.setdefault(str(event.grounding_id), n)
        if event.import_id is not None:
            anchors.setdefault(event.import_id, n)
    return anchors


def _append(using: str, leaves: dict[int, list[dict]]) -> None:
    """Index, hash and store each log's new leaves, grow its tree, sign a checkpoint."""
    now = timezone.now()
    for log_id, fields in sorted(leaves.items()):
        log = _lock_log(using, log_id)
        size = log.size
        edge = tree.edge(using, log_id, size)
        if merkle.root_of(edge) != bytes(log.root_hash):
            raise TreeMismatch(
                f"the stored tree of {log.dimension.name} at {size} does not hash to the "
                "signed root: not signing"
            )
        for offset, leaf in enumerate(fields):
            leaf["index"] = size + offset
            leaf["leaf"] = leaf_bytes(dimension=log.dimension.name, **_leaf_fields(leaf))
            leaf["leaf_hash"] = merkle.leaf_hash(leaf["leaf"])
            leaf["integrated_at"] = now
        edge, created = merkle.append(edge, size, (leaf["leaf_hash"] for leaf in fields))
        new_size, root = size + len(fields), merkle.root_of(edge)
        tree.store(using, fields, created, log_id)
        note = notes.sign_checkpoint(log.dimension.name, new_size, root)
        Checkpoint.objects.using(using).create(
            log_id=log_id, size=new_size, root_hash=root, note=note
        )
        log.size, log.root_hash, log.checkpoint = new_size, root, note
        log.save(using=using, update_fields=["size", "root_hash", "checkpoint", "updated_at"])


def _lock_log(using: str, log_id: int) -> Log:
    """The log's row, locked for this batch, with its Dimension read (not locked).

    `of=("self",)`: a plain FOR UPDATE over the join would also lock the Dimension's
    row, and every write whose foreign-key check (FOR KEY SHARE) or update touches it
    would queue behind the batch. FOR NO KEY UPDATE: the batch changes no key of the
    log, so the inserts referencing it (their FOR KEY SHARE) need not wait either."""
    return (
        Log.objects.using(using)
        .select_for_update(of=("self",), no_key=True)
        .select_related("dimension")
        .get(pk=log_id)
    )


def _leaf_fields(leaf: dict) -> dict:
    keys = ("index", "action", "grounding_id", "revision", "actor_ref", "at", "audit_event",
            "commitments")  # fmt: skip
    return {k: leaf[k] for k in keys}


def leaf_bytes(
    *, dimension, index, action, grounding_id, revision, actor_ref, at, audit_event, commitments
) -> bytes:
    """The leaf: canonical JSON of the write's fields and commitments (API.md)."""
    return canonical_bytes(
        {
            "dimension": dimension,
            "index": index,
            "action": action,
            "grounding_id": str(grounding_id) if grounding_id else None,
            "revision": revision,
            "actor_ref": actor_ref,
            "at": rfc3339(at),
            "audit_event": str(audit_event),
            "commitments": [
                {"table": c["table"], "row": c["row"], "hmac": c["hmac"]} for c in commitments
            ],
        }
    )


def rfc3339(value) -> str:
    return value.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


# -- inline: a thread of each app process, woken after commits -----------------------

_wake = threading.Event()
_started = threading.Lock()
_thread: threading.Thread | None = None
# Commits within this many seconds are integrated together.
DEBOUNCE = 0.05


def poke() -> None:
    """After a commit of a logged write (inline mode): have the process's sequencer
    thread integrate soon."""
    global _thread
    _wake.set()
    if _thread is None or not _thread.is_alive():
        with _started:
            if _thread is None or not _thread.is_alive():
                _thread = threading.Thread(target=_run_inline, name="log-sequencer", daemon=True)
                _thread.start()


def _run_inline() -> None:
    while True:
        _wake.wait()
        time.sleep(DEBOUNCE)
        _wake.clear()
        try:
            integrate(wait=False)
            if PendingWrite.objects.exists():
                _wake.set()  # another sequencer held the lock: try again shortly
                time.sleep(0.2)
        except Exception:  # a failed run is retried at the next commit
            logger.exception("the inline sequencer failed")
        finally:
            connections.close_all()


def run_forever(interval: float = 0.2, stop: threading.Event | None = None) -> None:
    """The service: integrate, then wait `interval` seconds, until `stop` is set."""
    stop = stop or threading.Event()
    reconnecting = lost_connection.Reconnecting("the sequencer")
    while not stop.is_set():
        try:
            integrate()
            reconnecting.succeeded()
        except TreeMismatch:
            logger.exception("the log's tree disagrees with its signed root; not signing")
            stop.wait(5)
        except ImproperlyConfigured:
            # A settings fault (no signing key) does not heal by retrying: stop.
            logger.exception("the sequencer cannot run as configured; stopping")
            raise
        except Exception as exc:  # the database restarting, a failover: try again
            reconnecting.failed(exc, stop)
            continue
        stop.wait(interval)
    connections.close_all()
