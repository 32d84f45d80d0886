"""The event feed's tables: the outbox, webhook subscriptions and their deliveries.

`Event` is the transactional outbox: written by `feed.outbox` inside the write that
caused it, never changed afterwards. `Delivery` is one event owed to one subscription
(pending until delivered or given up); `DeliveryAttempt` is one try, append-only, the
history of a delivery. `DeliveryLane` is the row a delivery worker locks (FOR UPDATE
SKIP LOCKED) while it delivers a subscription's due events, so one worker at a time
serves a subscription, in order, and a killed worker's lock dies with its connection;
it also holds the subscription's place in the log, up to which its deliveries exist.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from simple_history.models import HistoricalRecords

from common.kernel.history import AppendOnlyModel, TrackedManager
from common.kernel.identifiers import uuid7
from feed.choices import AttemptOutcome, DeliveryState
from policies.models import Dimension

MAX_URL_LENGTH = 2048


class Webhook(models.Model):
    """A Dimension's subscription: its stewards' receiver URL and the types it wants."""

    webhook_id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    dimension = models.ForeignKey(Dimension, on_delete=models.PROTECT, related_name="webhooks")
    url = models.CharField(max_length=MAX_URL_LENGTH)
    event_types = models.JSONField(
        default=list, blank=True, help_text="Event types delivered; empty: every type."
    )
    description = models.CharField(max_length=500, blank=True, default="")
    # The Standard Webhooks signing secret (whsec_…), shown once when created. Kept
    # out of the history rows: history is shown to stewards and exported.
    secret = models.CharField(max_length=100)
    active = models.BooleanField(default=True)
    # Deleted by a steward: kept (with its attempts, for the audit trail) but no longer
    # shown or delivered to. A row is never removed while writes may still owe it a
    # delivery (a concurrent write's outbox statement joins the active subscriptions).
    deleted_at = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.CharField(max_length=255, blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = TrackedManager()
    history = HistoricalRecords(excluded_fields=["secret"])

    class Meta:
        ordering = ["created_at", "webhook_id"]

    def __str__(self) -> str:
        return f"{self.dimension.name}: {self.url}"


class Event(AppendOnlyModel):
    """One CloudEvents 1.0 event of a committed write (API.md "Event feed").

    `id` orders the outbox within one transaction only: concurrent writes commit out
    of id order, so the stream is ordered by the transparency log's leaf index
    (feed.log_link, docs/events.md "Why the log orders the stream")."""

    id = models.BigAutoField(primary_key=True)
    event_id = models.UUIDField(unique=True, default=uuid7, editable=False)
    # No database constraint on the outbox's references: its rows are written only by
    # the outbox statement, from rows it joins (so they exist), and a Dimension, an
    # event or a webhook is never deleted. A constraint would make every write lock its
    # Dimension's row at commit (the check's FOR KEY SHARE), for nothing.
    # No index of its own: feed_event_dimension_idx (dimension, id) serves its lookups,
    # and each index is one more insert on every write.
    dimension = models.ForeignKey(
        Dimension,
        on_delete=models.DO_NOTHING,
        related_name="+",
        db_constraint=False,
        db_index=False,
    )
    type = models.CharField(max_length=64)
    subject = models.CharField(max_length=255)
    sequence = models.PositiveIntegerField()
    time = models.DateTimeField()
    # The applied audit event (and so the log leaf) this event was written with.
    audit_event_id = models.UUIDField(db_index=True)
    data = models.JSONField(default=dict)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["dimension", "id"], name="feed_event_dimension_idx")]

    def __str__(self) -> str:
        return f"{self.type} {self.subject}#{self.sequence}"


class Delivery(models.Model):
    """One event owed to one subscription: pending until a 2xx, or failed for good."""

    id = models.BigAutoField(primary_key=True)
    # No database constraints (see Event.dimension): written by the delivery workers
    # (feed.worker.fan_out) or, with the log off, the outbox statement. No index of
    # their own either: feed_delivery_once (webhook, event) leads with the webhook, and
    # nothing looks a delivery up by its event.
    webhook = models.ForeignKey(
        Webhook,
        on_delete=models.DO_NOTHING,
        related_name="deliveries",
        db_constraint=False,
        db_index=False,
    )
    event = models.ForeignKey(
        Event, on_delete=models.DO_NOTHING, related_name="+", db_constraint=False, db_index=False
    )
    # The event's subject and sequence, so the order per subject is kept by an index.
    subject = models.CharField(max_length=255)
    sequence = models.PositiveIntegerField()
    state = models.CharField(
        max_length=16, choices=DeliveryState.choices, default=DeliveryState.PENDING
    )
    due_at = models.DateTimeField()
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["webhook", "event"], name="feed_delivery_once"),
        ]
        indexes = [
            # With the id, in the workers' order (feed.worker.ready_deliveries): a
            # batch is the scan's first ready rows, however long the backlog.
            models.Index(
                fields=["webhook", "due_at", "id"],
                name="feed_delivery_due_idx",
                condition=models.Q(state="pending"),
            ),
            models.Index(
                fields=["webhook", "subject", "sequence"],
                name="feed_delivery_subject_idx",
                condition=models.Q(state="pending"),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event} to {self.webhook_id} ({self.state})"


class DeliveryAttempt(AppendOnlyModel):
    """One try of a delivery, numbered `n` per subscription (1, 2, 3, …)."""

    id = models.BigAutoField(primary_key=True)
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="attempts")
    n = models.PositiveIntegerField()
    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="tries")
    attempted_at = models.DateTimeField()
    outcome = models.CharField(max_length=16, choices=AttemptOutcome.choices)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    # What went wrong, in our words (never the receiver's body).
    detail = models.CharField(max_length=255, blank=True, default="")
    next_due_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["webhook", "-n"]
        constraints = [
            models.UniqueConstraint(fields=["webhook", "n"], name="feed_attempt_number"),
        ]

    def __str__(self) -> str:
        return f"attempt {self.n} of {self.webhook_id}: {self.outcome}"


class DeliveryLane(models.Model):
    """The lock a worker holds while delivering one subscription's events."""

    webhook = models.OneToOneField(
        Webhook, on_delete=models.CASCADE, primary_key=True, related_name="lane"
    )
    # Attempts numbered so far (the next attempt's `n` is one more) and when a worker
    # last served the lane (lanes are served least recently served first).
    attempts = models.PositiveIntegerField(default=0)
    served_at = models.DateTimeField(null=True, blank=True)
    # The subscription's place in its Dimension's transparency log: the events of every
    # leaf up to this index have their deliveries (feed.worker.fan_out); -1: none yet.
    logindex = models.BigIntegerField(default=-1)

    def __str__(self) -> str:
        return f"lane of {self.webhook_id}"
