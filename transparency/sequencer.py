"""The sequencer: committed pending leaves get their index, the tree grows, and a
checkpoint is signed (the Trillian design).

Writes queue leaves without an index in their own transaction and go on: no write
waits for another's log work. One sequencer at a time per log (a PostgreSQL
advisory lock on the log, and the log row locked FOR UPDATE everywhere) takes the
committed pending leaves in queue order, gives them the next indexes, writes their
exact bytes and hashes, the new perfect subtrees of the tree and the new root, and
signs a checkpoint, in one transaction. Before it signs, the stored right edge of
the tree must hash to the root of the last checkpoint it signed: a checkpoint
inconsistent with an earlier one is never signed.

Who runs it (GROUNDING_LOG_SEQUENCER): `inline`, a thread of each app process woken
after each commit (`poke`, debounced: `make run`); `service`, `manage.py
run_sequencer` (docker-compose, the production smoke). `integrate()` runs it now,
in this thread (tests, commands).
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections.abc import Iterable
from datetime import UTC

from django.db import connections, router, transaction
from django.utils import timezone

from policies.kernel.canonical import canonical_bytes
from policies.models import Dimension
from transparency import merkle, notes
from transparency.models import Checkpoint, Leaf, Log, Node

logger = logging.getLogger("grounding.transparency")

# pg_advisory_xact_lock(namespace, log id): the sequencer of one log.
LOCK_NAMESPACE = 0x7472  # "tr"
BATCH = 5000


class TreeMismatch(RuntimeError):
    """The stored tree does not hash to the last signed root: nothing is signed."""


def integrate(dimension: Dimension | str | None = None, *, wait: bool = True) -> int:
    """Integrate every committed pending leaf (of one Dimension's log, or of all) now;
    how many. With `wait=False` a log another sequencer holds is skipped."""
    using = router.db_for_write(Leaf)
    logs = Log.objects.using(using).filter(
        pk__in=Leaf.objects.using(using).filter(index__isnull=True).values("log_id")
    )
    if isinstance(dimension, Dimension):
        logs = logs.filter(dimension=dimension)
    elif dimension is not None:
        logs = logs.filter(dimension__name=dimension)
    total = 0
    for log_id in logs.order_by("pk").values_list("pk", flat=True):
        while True:
            done = integrate_log(log_id, using=using, wait=wait)
            total += done
            if done < BATCH:
                break
    return total


def integrate_log(log_id: int, *, using: str, wait: bool = True, batch: int = BATCH) -> int:
    connection = connections[using]
    with transaction.atomic(using=using):
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                function = "pg_advisory_xact_lock" if wait else "pg_try_advisory_xact_lock"
                cursor.execute(f"SELECT {function}(%s, %s)", [LOCK_NAMESPACE, log_id])
                if not wait and not cursor.fetchone()[0]:
                    return 0
        log = (
            Log.objects.using(using).select_for_update().select_related("dimension").get(pk=log_id)
        )
        pending = list(
            Leaf.objects.using(using)
            .filter(log_id=log_id, index__isnull=True)
            .order_by("id")
            .values_list(
                "id", "audit_event", "action", "grounding_id", "revision", "actor_ref", "at",
                "commitments",
            )[:batch]
        )  # fmt: skip
        if not pending:
            return 0
        size = log.size
        edge = _edge(using, log_id, size)
        if merkle.root_of(edge) != bytes(log.root_hash):
            raise TreeMismatch(
                f"the stored tree of {log.dimension.name} at {size} does not hash to the "
                "signed root: not signing"
            )
        name = log.dimension.name
        rows = []
        for offset, (pk, event, action, gid, rev, actor, at, commitments) in enumerate(pending):
            data = leaf_bytes(
                dimension=name,
                index=size + offset,
                action=action,
                grounding_id=gid,
                revision=rev,
                actor_ref=actor,
                at=at,
                audit_event=event,
                commitments=commitments,
            )
            rows.append((pk, size + offset, data, merkle.leaf_hash(data)))
        edge, created = merkle.append(edge, size, (r[3] for r in rows))
        new_size, root = size + len(rows), merkle.root_of(edge)
        _store(connection, using, log_id, rows, created)
        note = notes.sign_checkpoint(name, new_size, root)
        Checkpoint.objects.using(using).create(
            log_id=log_id, size=new_size, root_hash=root, note=note
        )
        log.size, log.root_hash, log.checkpoint = new_size, root, note
        log.save(using=using, update_fields=["size", "root_hash", "checkpoint", "updated_at"])
    return len(rows)


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


def _edge(using: str, log_id: int, size: int) -> list[tuple[merkle.Node, bytes]]:
    wanted = merkle.compact_range(size)
    found = read_nodes(using, log_id, wanted)
    missing = [n for n in wanted if n not in found]
    if missing:
        raise TreeMismatch(f"the stored tree lacks nodes {missing[:3]} of its right edge")
    return [(n, found[n]) for n in wanted]


def read_nodes(using: str, log_id: int, wanted: Iterable[merkle.Node]) -> dict:
    """The stored hashes of these perfect subtrees: one statement."""
    wanted = list(set(wanted))
    if not wanted:
        return {}
    connection = connections[using]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT n.level, n.position, n.hash FROM transparency_node n "
                "JOIN unnest(%s::int[], %s::bigint[]) AS w(level, position) "
                "ON n.level = w.level AND n.position = w.position WHERE n.log_id = %s",
                [[w[0] for w in wanted], [w[1] for w in wanted], log_id],
            )
            return {(lv, pos): bytes(h) for lv, pos, h in cursor.fetchall()}
    from django.db.models import Q

    where = Q()
    for level, position in wanted:
        where |= Q(level=level, position=position)
    return {
        (lv, pos): bytes(h)
        for lv, pos, h in Node.objects.using(using)
        .filter(where, log_id=log_id)
        .values_list("level", "position", "hash")
    }


def _store(connection, using: str, log_id: int, rows, created) -> None:
    now = timezone.now()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE transparency_leaf AS t SET \"index\" = v.idx, leaf = v.data, "
                "leaf_hash = v.hash, integrated_at = %s FROM unnest(%s::bigint[], %s::bigint[], "
                "%s::bytea[], %s::bytea[]) AS v(id, idx, data, hash) WHERE t.id = v.id",
                [now, [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                 [r[3] for r in rows]],
            )  # fmt: skip
            cursor.execute(
                "INSERT INTO transparency_node (log_id, level, position, hash) "
                "SELECT %s, * FROM unnest(%s::smallint[], %s::bigint[], %s::bytea[])",
                [log_id, [n[0][0] for n in created], [n[0][1] for n in created],
                 [n[1] for n in created]],
            )  # fmt: skip
        return
    for pk, index, data, digest in rows:
        Leaf.objects.using(using).filter(pk=pk).update(
            index=index, leaf=data, leaf_hash=digest, integrated_at=now
        )
    Node.objects.using(using).bulk_create(
        [Node(log_id=log_id, level=n[0], position=n[1], hash=h) for n, h in created]
    )


def b64(data: bytes) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


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
            if integrate(wait=False) == 0 and _pending_elsewhere():
                _wake.set()  # another process holds a log: try again shortly
                time.sleep(0.2)
        except Exception:  # a failed run is retried at the next commit
            logger.exception("the inline sequencer failed")
        finally:
            connections.close_all()


def _pending_elsewhere() -> bool:
    return Leaf.objects.filter(index__isnull=True).exists()


def run_forever(interval: float = 0.2, stop: threading.Event | None = None) -> None:
    """The service: integrate, then wait `interval` seconds, until `stop` is set."""
    stop = stop or threading.Event()
    while not stop.is_set():
        try:
            integrate()
        except TreeMismatch:
            logger.exception("the log's tree disagrees with its signed root; not signing")
            stop.wait(5)
        except Exception:  # the database restarting, a failover: try again
            logger.exception("the sequencer failed; retrying")
            connections.close_all()
            stop.wait(1)
        stop.wait(interval)
    connections.close_all()
