"""The verifier's checks of what the leaves commit to and what the tree stores:
commitments against the rows as stored now, the perfect subtrees, destroyed keys,
and audit events without a leaf."""

from __future__ import annotations

import binascii
import hmac
import json

from django.db import connections
from django.db.models import Exists, OuterRef

from transparency.choices import Finding
from transparency.models import Leaf, Log, PendingWrite
from transparency.verifier.report import Problem, Report


def check_commitments(report: Report, chunk) -> None:
    """Every commitment of a chunk's leaves (`chunk.Chunk`) against its row as stored
    now: the HMAC, with the key it names, of the row's canonical bytes."""
    problems = report.problems
    destroyed = report.destroyed
    rows, keys = chunk.rows, chunk.keys
    count = withheld = 0
    digest, encode = hmac.digest, binascii.b2a_base64
    nothing: dict = {}
    for (index, *_), said in zip(chunk.leaves, chunk.entries, strict=True):
        for table, pk, committed, key_id in said:
            count += 1
            if table is None or pk is None or committed is None:
                problems.append(
                    Problem(
                        Finding.COMMITMENT,
                        "the leaf row's commitment is not a table, a row and an HMAC",
                        index,
                        table,
                        pk,
                    )
                )
                continue
            found = rows.get(table, nothing).get(pk)
            if found is None:
                problems.append(
                    Problem(Finding.ROW_MISSING, "the committed row is gone", index, table, pk)
                )
                continue
            data, subject = found
            key = keys.get(key_id)
            if (
                key is None
                or (subject is not None and key[0] != subject)
                or (subject is None and not key[0].startswith("log:"))
            ):
                problems.append(
                    Problem(Finding.KEY, "the commitment's key is not the row's", index, table, pk)
                )
                continue
            if key[1] is None:
                withheld += 1
                destroyed[key[0]] = key[2] or None
                continue
            if encode(digest(key[1], data, "sha256"), newline=False).decode() != committed:
                problems.append(
                    Problem(
                        Finding.COMMITMENT,
                        "the stored row is not the committed one",
                        index,
                        table,
                        pk,
                    )
                )
    report.commitments += count
    report.withheld += withheld


def stored_nodes(log: Log, using: str) -> dict[int, dict[int, bytes]]:
    """The stored perfect subtrees above the leaves: {level: {position: hash}}."""
    with connections[using].cursor() as cursor:
        cursor.execute(
            "SELECT level, position, hash FROM transparency_node WHERE log_id = %s AND level > 0",
            [log.pk],
        )
        out: dict[int, dict[int, bytes]] = {}
        for level, position, h in cursor.fetchall():
            out.setdefault(level, {})[position] = bytes(h)
        return out


def check_nodes(report: Report, levels: list[list[bytes]], stored: dict) -> None:
    """The stored perfect subtrees (`stored_nodes`), level by level, against the nodes
    the walk made from the leaves (`NodeStack.levels`; b"": not judged)."""
    for level in range(1, len(levels)):
        at = stored.get(level, {})
        for position, h in enumerate(levels[level]):
            if h and at.get(position, b"") != h:
                first = position << level
                report.problems.append(
                    Problem(
                        Finding.TREE,
                        f"the stored node {level}/{position} is not the "
                        f"hash of leaves {first}..{first + (1 << level) - 1}",
                        first,
                    )
                )
                return


def check_destroyed_keys(report: Report, disposals: set[str]) -> None:
    """Each destroyed key this log's commitments use was destroyed by a disposal the
    log records (the Disposal row a `dispose` leaf commits to)."""
    for subject, by in sorted(report.destroyed.items()):
        if by is None or by not in disposals:
            report.problems.append(
                Problem(
                    Finding.KEY_DESTROYED,
                    f"the key of {subject} was destroyed, and no disposal in the log records it",
                )
            )


def unlogged_events(log: Log, using: str) -> list:
    """The applied events of logged writes since the log's first leaf that have no
    leaf, oldest first, the writes still queued for the sequencer left out."""
    from policies.models import AuditEvent
    from transparency.choices import LOGGED_ACTIONS

    first = Leaf.objects.using(using).filter(log=log).order_by("id").values_list("at", flat=True)
    start = first.first()
    if start is None:
        return []
    missing = (
        AuditEvent.objects.using(using)
        .filter(
            dimension_ref=log.dimension.name,
            outcome="applied",
            action__in=LOGGED_ACTIONS,
            occurred_at__gte=start,
        )
        # NOT EXISTS, an anti-join; NOT IN (subquery) is hashed only while the log's
        # event ids fit in work_mem, else rescanned for every event.
        .exclude(Exists(Leaf.objects.using(using).filter(audit_event=OuterRef("event_id"))))
        .order_by("occurred_at")
        .values_list("event_id", flat=True)
    )
    queued = queued_events(using)
    return [e for e in missing if str(e) not in queued]


def check_audit(report: Report, missing: list) -> None:
    """An applied event of a logged write without its leaf (`unlogged_events`): the
    first ten are named."""
    for event_id in missing[:10]:
        report.problems.append(
            Problem(
                Finding.AUDIT,
                "an applied event of a logged write has no leaf",
                None,
                "policies_auditevent",
                str(event_id),
            )
        )


def queued_events(using: str) -> set[str]:
    """The events of the writes still waiting for the sequencer (not yet leaves)."""
    out: set[str] = set()
    for events in PendingWrite.objects.using(using).values_list("events", flat=True):
        out.update(json.loads(events) if isinstance(events, str) else events)
    return out
