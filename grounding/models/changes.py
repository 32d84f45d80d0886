"""Change notifications: one record per `change_ref` in a Dimension, and the links it
sent back to review with the revision each got."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from simple_history.models import HistoricalRecords

from common.kernel.history import AppendOnlyModel, TrackedManager
from common.kernel.identifiers import uuid7
from grounding.choices import ChangeKind


class ChangeNotification(models.Model):
    notification_id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    dimension = models.ForeignKey(
        "policies.Dimension",
        on_delete=models.PROTECT,
        related_name="change_notifications",
        db_index=False,  # the (dimension, change_ref) constraint leads with it
    )
    change_ref = models.CharField(max_length=512)
    kind = models.CharField(max_length=16, choices=ChangeKind.choices)
    subject_ref = models.CharField(max_length=2048)
    observed_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField()
    # sha256 of the notification's body (kind, subject, observed_at, reason): the same
    # change_ref with another body is a conflict, with the same body a replay.
    body_sha256 = models.CharField(max_length=64)
    affected = models.PositiveIntegerField(default=0)
    # Null while the fan-out's batches are still being applied (large notifications).
    completed_at = models.DateTimeField(null=True, blank=True)
    recorded_at = models.DateTimeField(auto_now_add=True)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )

    objects = TrackedManager()
    history = HistoricalRecords(no_db_index=["dimension", "recorded_by"])

    class Meta:
        ordering = ["-recorded_at", "-notification_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["dimension", "change_ref"], name="change_ref_unique_per_dimension"
            )
        ]
        indexes = [
            models.Index(fields=["dimension", "-recorded_at"], name="change_dim_recorded_idx"),
        ]

    def __str__(self) -> str:
        return self.change_ref


class ChangeNotificationLink(AppendOnlyModel):
    """One affected link and the one revision the notification gave it."""

    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    notification = models.ForeignKey(
        ChangeNotification,
        on_delete=models.CASCADE,
        related_name="affected_links",
        db_index=False,  # the (notification, link) constraint leads with it
    )
    link = models.ForeignKey(
        "grounding.GroundingLink", on_delete=models.CASCADE, related_name="change_notifications"
    )
    revision = models.PositiveIntegerField(help_text="The link revision the notification made.")

    class Meta:
        ordering = ["notification", "link"]
        constraints = [
            # Exactly one revision per link and notification, under retries and races.
            models.UniqueConstraint(
                fields=["notification", "link"], name="change_link_once_per_notification"
            )
        ]

    def __str__(self) -> str:
        return f"{self.link_id}@{self.revision}"
