"""The verifier's checks of what the leaves commit to and what the tree stores:
commitments against the rows as stored now, the perfect subtrees, destroyed keys,
and audit events without a leaf."""

from __future__ import annotations

import base64
import hashlib
import hmac
import uuid

from django.db import connections

from transparency import tables
from transparency.choices import Finding
from transparency.models import Leaf, Log, RecordKey
from transparency.verifier.crypto import hash_children
from transparency.verifier.report import Problem, Report


def check_commitments(report: Report, chunk: list, using: str) -> None:
    connection = connections[using]
    wanted: dict[str, set[str]] = {}
    key_ids: set[int] = set()
    for _, _, _, _, row in chunk:
        for c in row["commitments"]:
            wanted.setdefault(c["table"], set()).add(c["row"])
        key_ids.update(row["key_ids"])
    stored = {t: canonical_rows(connection, t, ids) for t, ids in wanted.items()}
    keys = {
        k.pk: k
        for k in RecordKey.objects.using(using)
        .filter(pk__in=key_ids)
        .only("subject", "key", "destroyed_at", "destroyed_by")
    }
    for index, _, _, _, row in chunk:
        for c, key_id in zip(row["commitments"], row["key_ids"], strict=False):
            report.commitments += 1
            table, pk = c["table"], c["row"]
            found = stored.get(table, {}).get(pk)
            if found is None:
                report.problems.append(
                    Problem(Finding.ROW_MISSING, "the committed row is gone", index, table, pk)
                )
                continue
            data, subject = found
            key = keys.get(key_id)
            log_key = key is not None and key.subject.startswith("log:")
            if (
                key is None
                or (subject is not None and key.subject != subject)
                or (subject is None and not log_key)
            ):
                report.problems.append(
                    Problem(Finding.KEY, "the commitment's key is not the row's", index, table, pk)
                )
                continue
            if key.key is None:
                report.withheld += 1
                report.destroyed[key.subject] = str(key.destroyed_by or "") or None
                continue
            made = hmac.new(bytes(key.key), data, hashlib.sha256).digest()
            if base64.b64encode(made).decode() != c["hmac"]:
                report.problems.append(
                    Problem(
                        Finding.COMMITMENT,
                        "the stored row is not the committed one",
                        index,
                        table,
                        pk,
                    )
                )


def canonical_rows(connection, table: str, ids: set[str]) -> dict[str, tuple[bytes, str | None]]:
    spec = tables.get(table)
    if spec is None:
        return {}
    quote = connection.ops.quote_name
    columns = ", ".join(f"h.{quote(c)}" for c in spec.columns)
    key = f"h.{quote(spec.key_column)}" if spec.key_column else "NULL"
    pk_field = spec.model._meta.pk
    values = [pk_field.to_python(i) for i in ids]
    if connection.vendor == "postgresql":
        expression = f"record_send(ROW({columns}))"
        where, params = f"h.{quote(spec.pk)} = ANY(%s)", [values]
    else:
        expression = f"json_array({columns})"
        values = [v.hex if isinstance(v, uuid.UUID) else v for v in values]
        where, params = f"h.{quote(spec.pk)} IN ({', '.join(['%s'] * len(values))})", values
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT h.{quote(spec.pk)}, {expression}, {key} FROM {quote(table)} h WHERE {where}",
            params,
        )
        out = {}
        for pk, data, key_value in cursor.fetchall():
            blob = data.encode("utf-8") if isinstance(data, str) else bytes(data)
            subject = (
                f"{spec.key_kind}:{_text(key_value)}"
                if spec.key_kind and key_value is not None
                else None
            )
            out[_text(pk)] = (blob, subject)
        return out


def _text(value) -> str:
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, str) and len(value) == 32:
        try:
            return str(uuid.UUID(hex=value))
        except ValueError:
            return value
    return str(value)


def check_nodes(report: Report, log: Log, level0: list[bytes], using: str) -> None:
    """The stored perfect subtrees above the leaves, level by level."""
    level, below = 1, level0
    connection = connections[using]
    while len(below) >= 2:
        here = [
            hash_children(below[2 * i], below[2 * i + 1]) if below[2 * i] and below[2 * i + 1]
            else b""
            for i in range(len(below) // 2)
        ]  # fmt: skip
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT position, hash FROM transparency_node WHERE log_id = %s AND level = %s "
                "ORDER BY position",
                [log.pk, level],
            )
            stored = dict(cursor.fetchall())
        for position, h in enumerate(here):
            if h and bytes(stored.get(position, b"")) != h:
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
        level, below = level + 1, here


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


def check_audit(report: Report, log: Log, using: str) -> None:
    from policies.models import AuditEvent
    from transparency.enqueue import LOGGED_ACTIONS

    first = Leaf.objects.using(using).filter(log=log).order_by("id").values_list("at", flat=True)
    start = first.first()
    if start is None:
        return
    missing = (
        AuditEvent.objects.using(using)
        .filter(
            dimension_ref=log.dimension.name,
            outcome="applied",
            action__in=LOGGED_ACTIONS,
            occurred_at__gte=start,
        )
        .exclude(event_id__in=Leaf.objects.using(using).values("audit_event"))
        .order_by("occurred_at")
        .values_list("event_id", flat=True)
    )
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
