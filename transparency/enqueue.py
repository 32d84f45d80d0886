"""Pending writes queued inside each accepted write's transaction.

`policies.audit` calls `on_applied` with the applied events a write just wrote; the
rows the write stored since the previous call are taken from
`common.kernel.written`. A logged write queues one small row
(`transparency.models.PendingWrite`: its events' ids in order, and the keys of the
committed rows it stored, by table) in its own transaction, whatever its size. The
sequencer, after the write committed, computes the commitments
(`transparency.commitments`), makes one leaf per event and integrates them: no write
waits for another write's log work, and the log's hashing runs beside the writes,
not inside them (`transparency.sequencer`).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence

import orjson
from django.conf import settings
from django.db import connections, router, transaction
from django.db.models.signals import post_save
from django.utils import timezone

from common.kernel import written
from common.kernel.along import Along
from policies import audit
from policies.models import AuditEvent, Dimension
from transparency import tables
from transparency.choices import LOGGED_ACTIONS
from transparency.models import Log, RecordKey


def enabled() -> bool:
    return getattr(settings, "GROUNDING_LOG_ENABLED", True)


def install() -> None:
    """Hook the log into the write path (transparency.apps): at start-up, once."""

    post_save.connect(_dimension_saved, sender=Dimension, dispatch_uid="transparency.log")
    _register_own_tables()
    switch(enabled())


def switch(on: bool) -> None:
    """Turn the log on or off in this process (start-up; the bench's log-off runs).
    Off, the writers collect nothing and no leaf is queued."""
    written.enable(on)
    if on:
        _connect_savers()
    audit.on_applied("transparency", on_applied if on else _off)


def _off(events: Sequence[AuditEvent]) -> None:
    return None


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

    # Strong references: the receivers are closures, a weak one would be collected.
    post_create_historical_record.connect(
        history_saved, weak=False, dispatch_uid="transparency.history"
    )
    post_save.connect(record_saved, weak=False, dispatch_uid="transparency.records")


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


def on_applied(events: Sequence[AuditEvent]) -> list[Along] | None:
    """The listener of `policies.audit`: the row queueing the write, if it is a logged
    one (sent with the other listeners' rows: `common.kernel.along`)."""
    if not events:
        return None
    using = router.db_for_write(AuditEvent)
    rows = written.drain(using)
    logged = [e for e in events if e.action in LOGGED_ACTIONS and e.dimension_ref]
    if not logged:
        return None
    rows.pop(AuditEvent._meta.db_table, None)
    # A row may be told twice (a history row's save is also a post_save): once each.
    committed = {
        t: list(dict.fromkeys(_json_key(k) for k in keys)) for t, keys in rows.items() if keys
    }
    committed = {t: keys for t, keys in committed.items() if tables.get(t) is not None}
    committed[AuditEvent._meta.db_table] = [str(e.event_id) for e in logged]
    if getattr(settings, "GROUNDING_LOG_SEQUENCER", "service") == "inline":
        from transparency import sequencer

        transaction.on_commit(sequencer.poke, using=using)
    return [
        Along(
            "INSERT INTO transparency_pendingwrite (events, rows, created_at) VALUES (%s, %s, %s)",
            [
                orjson.dumps([str(e.event_id) for e in logged]).decode(),
                orjson.dumps(committed).decode(),
                connections[using].ops.adapt_datetimefield_value(timezone.now()),
            ],
        )
    ]


def _json_key(key):
    return str(key) if isinstance(key, uuid.UUID) else key
