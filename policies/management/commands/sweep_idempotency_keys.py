"""`manage.py sweep_idempotency_keys`: delete the idempotency keys whose time is up.

A key is kept GROUNDING_IDEMPOTENCY_TTL_HOURS (24 by default; API.md "Retries and
idempotency"). An expired key is already ignored, and replaced by the next write
that sends it; the sweep only keeps the table small. Run it from cron, e.g. hourly.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand
from django.utils import timezone

from policies.models import IdempotencyKey

# Deleted this many at a time, so a large backlog never holds a long transaction.
BATCH = 5000


class Command(BaseCommand):
    help = "Delete the idempotency keys past their expiry."

    def handle(self, *args, **options) -> None:
        now = timezone.now()
        total = 0
        while True:
            ids = list(
                IdempotencyKey.objects.filter(expires_at__lte=now).values_list("pk", flat=True)[
                    :BATCH
                ]
            )
            if not ids:
                break
            deleted, _ = IdempotencyKey.objects.filter(pk__in=ids).delete()
            total += deleted
        self.stdout.write(f"Deleted {total} expired idempotency key(s).")
