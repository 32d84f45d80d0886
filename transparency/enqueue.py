"""Leaves queued inside each accepted write's transaction.

`policies.audit` calls `on_applied` with the applied events a write just wrote; the
rows the write stored since the previous call are taken from
`policies.kernel.written`. Each event of a logged write becomes one pending leaf of
its Dimension's log: its fields, and one commitment per committed row of the write,
`HMAC-SHA256(record_key, canonical row)` (`transparency.tables`). On PostgreSQL it
is one statement (`transparency.queue_sql`): the database reads the canonical rows,
creates the keys that do not exist yet and computes the HMACs (pgcrypto), and inserts
the leaves; nothing of the rows comes back to the process. Elsewhere (SQLite) the
same is done here, in Python.

A pending leaf has no index: the sequencer gives it one after the write committed, so
a write waits for no other write's log work (`transparency.sequencer`).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import connections, router, transaction
from django.db.models.signals import post_save

from policies.kernel import written
from policies.models import AuditEvent, Dimension
from transparency import queue_sql, tables
from transparency.models import Leaf, LeafRevision, Log, RecordKey

# The accepted writes the log records (issue #28): registration (one leaf per link of
# a bulk), revision, assessment, anchor observation, withdrawal, disposal,
# evidence-set membership, change fan-out, disclosure decisions, WSP import. Token,
# role, profile and Dimension events and projections are not writes of the record.
LOGGED_ACTIONS = frozenset(
    {
        "register",
        "register_bulk",
        "register_from_citations",
        "revise",
        "bind_assessment",
        "record_anchor_observation",
        "withdraw",
        "dispose",
        "create_evidence_set",
        "change_evidence_set",
        "notify_change",
        "record_disclosure_decision",
        "revoke_disclosure_decision",
        "wsp_import",
    }
)


@dataclass(frozen=True)
class Pending:
    """One event's leaf to queue (its fields; the commitments are computed with it)."""

    n: int
    event_id: uuid.UUID
    dimension: str
    action: str
    grounding_id: uuid.UUID | None
    revision: int | None
    actor_ref: str
    at: datetime


def enabled() -> bool:
    return getattr(settings, "GROUNDING_LOG_ENABLED", True)


def install() -> None:
    """Hook the log into the write path (transparency.apps): at start-up, once."""
    from policies import audit

    post_save.connect(_dimension_saved, sender=Dimension, dispatch_uid="transparency.log")
    _register_own_tables()
    if not enabled():
        written.enable(False)
        audit.on_applied("transparency", lambda events: None)
        return
    written.enable(True)
    _connect_savers()
    audit.on_applied("transparency", on_applied)


def _register_own_tables() -> None:
    from policies.models import DisclosureDecision

    tables.register(AuditEvent, anchor_field="event_id")
    tables.register(DisclosureDecision.history.model)


def _connect_savers() -> None:
    """The ORM's saves tell `written` what they stored: simple-history's history rows,
    and the append-only records the apps registered."""
    from simple_history.signals import post_create_historical_record

    def history_saved(sender, history_instance, using=None, **kwargs) -> None:
        using = using or router.db_for_write(sender)
        written.note(using, sender._meta.db_table, [history_instance.pk])

    def record_saved(sender, instance, created, using, raw=False, **kwargs) -> None:
        if created and not raw and sender._meta.db_table in tables.committed():
            written.note(using, sender._meta.db_table, [instance.pk])

    post_create_historical_record.connect(history_saved, dispatch_uid="transparency.history")
    post_save.connect(record_saved, dispatch_uid="transparency.records")


def _dimension_saved(sender, instance: Dimension, created: bool, raw: bool = False, **kwargs):
    # Every Dimension has its log (and the log's key) from the transaction creating it.
    if created and not raw:
        ensure_log(instance)


def ensure_log(dimension: Dimension) -> Log:
    log, _ = Log.objects.get_or_create(dimension=dimension)
    subject = tables.log_subject(log.pk)
    if not RecordKey.objects.filter(subject=subject, destroyed_at__isnull=True).exists():
        RecordKey.objects.create(subject=subject, key=os.urandom(32))
    return log


def on_applied(events: Sequence[AuditEvent]) -> None:
    """The listener of `policies.audit`: queue one leaf per event of a logged write."""
    if not events:
        return
    using = router.db_for_write(AuditEvent)
    rows = written.drain(using)
    logged = [e for e in events if e.action in LOGGED_ACTIONS and e.dimension_ref]
    if not logged:
        return
    rows.pop(AuditEvent._meta.db_table, None)
    rows = {t: keys for t, keys in rows.items() if keys and t in tables.committed()}
    rows[AuditEvent._meta.db_table] = [e.event_id for e in logged]
    pending = [
        Pending(
            n=n,
            event_id=e.event_id,
            dimension=e.dimension_ref,
            action=e.action,
            grounding_id=e.grounding_id,
            revision=e.resulting_revision,
            actor_ref=e.actor_ref,
            at=e.occurred_at,
        )
        for n, e in enumerate(logged)
    ]
    anchors = _anchors(logged)
    connection = connections[using]
    if connection.vendor == "postgresql":
        queue_sql.queue(connection, pending, rows, anchors)
    else:
        _queue_python(using, pending, rows, anchors)
    if getattr(settings, "GROUNDING_LOG_SEQUENCER", "service") == "inline":
        from transparency import sequencer

        transaction.on_commit(sequencer.poke, using=using)


def _anchors(events: Sequence[AuditEvent]) -> dict[str, int]:
    """Which event a row of a batch belongs to, by the text of its anchor column: the
    event's own id, its link, or its WSP import. Unanchored rows go to the first."""
    anchors: dict[str, int] = {}
    for n, event in enumerate(events):
        anchors.setdefault(str(event.event_id), n)
        if event.grounding_id:
            anchors.setdefault(str(event.grounding_id), n)
        imported = (event.references or {}).get("import_id")
        if isinstance(imported, str):
            anchors.setdefault(imported, n)
    return anchors


# -- elsewhere than PostgreSQL: the same leaves, computed here ----------------------


def _queue_python(
    using: str, pending: list[Pending], rows: dict[str, list], anchors: dict[str, int]
) -> None:
    """The leaves as the PostgreSQL statement queues them, in a few statements: the
    logs, one read per table, the live keys, the new keys, the leaves."""
    names = {p.dimension for p in pending}
    logs = {
        log.dimension.name: log
        for log in Log.objects.using(using)
        .select_related("dimension")
        .filter(dimension__name__in=names)
    }
    for name in names - logs.keys():
        logs[name] = ensure_log(Dimension.objects.using(using).get(name=name))
    connection = connections[using]
    found: list[tuple[int, str, CanonicalRow, str]] = []
    for table, keys in rows.items():
        for row in canonical_rows(connection, tables.get(table), keys):
            n = anchors.get(row.anchor, 0) if row.anchor is not None else 0
            subject = row.subject or tables.log_subject(logs[pending[n].dimension].pk)
            found.append((n, table, row, subject))
    live = {
        k.subject: k
        for k in RecordKey.objects.using(using).filter(
            subject__in={f[3] for f in found}, destroyed_at__isnull=True
        )
    }
    missing = sorted({f[3] for f in found} - live.keys())
    if missing:
        made = RecordKey.objects.using(using).bulk_create(
            [RecordKey(subject=s, key=os.urandom(32)) for s in missing]
        )
        live.update((k.subject, k) for k in made)
    by_event: dict[int, list[tuple[str, str, int, bytes]]] = {p.n: [] for p in pending}
    extra: list[tuple[int, uuid.UUID, int]] = []
    for n, table, row, subject in found:
        key = live[subject]
        digest = hmac.new(bytes(key.key), row.data, hashlib.sha256).digest()
        by_event[n].append((table, row.id, key.pk, digest))
        event = pending[n]
        if row.revision is not None and (
            row.grounding_id != event.grounding_id or row.revision != event.revision
        ):
            extra.append((n, row.grounding_id, row.revision))
    leaves = []
    for p in pending:
        made = sorted(by_event[p.n], key=lambda c: (c[0], c[1]))
        leaves.append(
            Leaf(
                log=logs[p.dimension],
                audit_event=p.event_id,
                action=p.action,
                grounding_id=p.grounding_id,
                revision=p.revision,
                actor_ref=p.actor_ref,
                at=p.at,
                commitments=[{"table": t, "row": r, "hmac": _b64(d)} for t, r, _, d in made],
                key_ids=[k for _, _, k, _ in made],
            )
        )
    Leaf.objects.using(using).bulk_create(leaves)
    if extra:
        LeafRevision.objects.using(using).bulk_create(
            [LeafRevision(leaf=leaves[n], grounding_id=g, revision=r) for n, g, r in extra]
        )


def _b64(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode("ascii")


@dataclass(frozen=True)
class CanonicalRow:
    id: str
    data: bytes
    subject: str | None
    anchor: str | None
    grounding_id: uuid.UUID | None
    revision: int | None


def canonical_rows(connection, spec: tables.Committed, keys: list) -> list[CanonicalRow]:
    """The committed rows of `spec.table` with these keys, as the log commits them."""
    if not keys:
        return []
    quote = connection.ops.quote_name
    key_col = f"h.{quote(spec.key_column)}" if spec.key_column else "NULL"
    anchor = f"h.{quote(spec.anchor_column)}" if spec.anchor_column else "NULL"
    revision = f"h.{quote(spec.revision_column)}" if spec.revision_column else "NULL"
    data = queue_sql.canonical_expression(connection, spec, "h")
    found: list[CanonicalRow] = []
    with connection.cursor() as cursor:
        for start in range(0, len(keys), 500):
            chunk = [_db_key(k) for k in keys[start : start + 500]]
            marks = ", ".join(["%s"] * len(chunk))
            cursor.execute(
                f"SELECT h.{quote(spec.pk)}, {data}, {key_col}, {anchor}, {revision} "
                f"FROM {quote(spec.table)} h WHERE h.{quote(spec.pk)} IN ({marks})",
                chunk,
            )
            for pk, text, key_value, anchor_value, rev in cursor.fetchall():
                found.append(
                    CanonicalRow(
                        id=_row_id(pk),
                        data=text.encode("utf-8") if isinstance(text, str) else bytes(text),
                        subject=tables.subject(spec.key_kind, _row_id(key_value))
                        if spec.key_kind and key_value is not None
                        else None,
                        anchor=_row_id(anchor_value) if anchor_value is not None else None,
                        grounding_id=uuid.UUID(_row_id(key_value)) if rev is not None else None,
                        revision=rev,
                    )
                )
    return found


def _db_key(key):
    # SQLite stores UUIDs as 32 hex digits (Django's UUIDField without a native type).
    return key.hex if isinstance(key, uuid.UUID) else key


def _row_id(value) -> str:
    """A key as the leaf names it: a UUID in its hyphenated form, else its text."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, str) and len(value) == 32:
        try:
            return str(uuid.UUID(hex=value))
        except ValueError:
            return value
    return str(value)
