"""Idempotency keys (common.web.idempotency): the first answer to a write sent with
an Idempotency-Key, per caller and key, kept GROUNDING_IDEMPOTENCY_TTL_HOURS."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("policies", "0007_throttle_counters"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="IdempotencyKey",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("key", models.CharField(max_length=255)),
                (
                    "fingerprint",
                    models.CharField(
                        help_text="sha256 of the canonical method, path and body.", max_length=64
                    ),
                ),
                ("status", models.PositiveSmallIntegerField()),
                (
                    "body",
                    models.TextField(blank=True, default="", help_text="The answer's JSON text."),
                ),
                (
                    "headers",
                    models.JSONField(blank=True, default=dict, help_text="Location and ETag."),
                ),
                ("created_at", models.DateTimeField()),
                ("expires_at", models.DateTimeField()),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["expires_at"], name="idempotency_expires_idx")],
                "constraints": [
                    models.UniqueConstraint(fields=("user", "key"), name="idempotency_key_unique")
                ],
            },
        ),
    ]
