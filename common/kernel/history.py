"""Guards that keep every change to a tracked model in its history.

Tracked models use `TrackedQuerySet`: `QuerySet.update()` (and so `bulk_update`)
would write rows without history rows, so it raises. Bulk paths use
simple-history's `bulk_create_with_history`, or `save()` per row, which both
write history. Append-only models (audit events, observations, assessments)
refuse updates and deletes altogether.
"""

from django.db import models

from common.kernel import compat


class HistoryBypassError(RuntimeError):
    """Raised when code tries to change tracked rows without writing history."""


class TrackedQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise HistoryBypassError(
            f"{self.model.__name__} is history-tracked: QuerySet.update() would skip its "
            "history rows. Change rows through the services (save() per row)."
        )

    def bulk_update(self, objs, fields, batch_size=None):
        raise HistoryBypassError(
            f"{self.model.__name__} is history-tracked: bulk_update() would skip its history rows."
        )


TrackedManager = models.Manager.from_queryset(TrackedQuerySet)


class AppendOnlyQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise HistoryBypassError(f"{self.model.__name__} rows are append-only.")

    def bulk_update(self, objs, fields, batch_size=None):
        raise HistoryBypassError(f"{self.model.__name__} rows are append-only.")

    def delete(self):
        raise HistoryBypassError(f"{self.model.__name__} rows are append-only.")


AppendOnlyManager = models.Manager.from_queryset(AppendOnlyQuerySet)


class AppendOnlyModel(models.Model):
    """A row written once and never changed or deleted through the ORM."""

    objects = AppendOnlyManager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not compat.is_adding(self):
            raise HistoryBypassError(f"{type(self).__name__} rows are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise HistoryBypassError(f"{type(self).__name__} rows are append-only.")

    @classmethod
    def disposal_queryset(cls) -> models.QuerySet:
        """The one way past append-only: a lawful disposal purging copied payloads.

        Only retention code (`evidence.retention`, `grounding.services.disposal`) may
        use it, and only after recording the external disposal receipt.
        """
        return models.QuerySet(model=cls)
