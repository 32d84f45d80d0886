"""Endpoint bindings. Rows are immutable: revising an endpoint writes a new row
that names its predecessor. Only disposal may purge copied payloads from them."""

from __future__ import annotations

from django.db import models
from simple_history.models import HistoricalRecords

from common.kernel import compat
from common.kernel.history import HistoryBypassError, TrackedManager
from common.kernel.identifiers import uuid7
from grounding.choices import RebindRequirement


class ImmutableBinding(models.Model):
    binding_id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    bound_in_revision = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TrackedManager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not compat.is_adding(self) and not getattr(self, "_disposal_purge", False):
            raise HistoryBypassError(
                f"{type(self).__name__} rows are immutable; revise the link to rebind."
            )
        super().save(*args, **kwargs)


class StatementBinding(ImmutableBinding):
    link = models.ForeignKey(
        "grounding.GroundingLink", on_delete=models.CASCADE, related_name="statement_bindings"
    )
    predecessor = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    statement_ref = models.CharField(max_length=512)
    answer_revision_ref = models.CharField(max_length=512)
    answer_revision_provisional = models.BooleanField(default=False)
    answer_selector = models.JSONField()
    answer_representation = models.JSONField()
    claim_scope = models.JSONField()
    finalization_binding = models.CharField(max_length=512, blank=True, default="")
    rebind_requirement = models.CharField(
        max_length=16, choices=RebindRequirement.choices, default=RebindRequirement.NONE
    )

    # History is read by link (and binding); other reference columns stay unindexed.
    history = HistoricalRecords(no_db_index=["predecessor"])

    class Meta:
        ordering = ["link", "bound_in_revision"]
        # Exact lookups only: plain indexes, without PostgreSQL's extra LIKE-pattern
        # index that db_index adds to a CharField (one more index per write).
        indexes = [
            models.Index(fields=["statement_ref"], name="statement_ref_idx"),
            models.Index(fields=["answer_revision_ref"], name="answer_revision_ref_idx"),
        ]

    def __str__(self) -> str:
        # Not the statement_ref: it belongs to the disclosable `statement` group, and a
        # row's name shows wherever the admin names it (titles, related fields).
        return f"statement binding {self.binding_id}"


class PassageBinding(ImmutableBinding):
    """The passage endpoint and its source anchor (selector and selector profile)."""

    link = models.ForeignKey(
        "grounding.GroundingLink", on_delete=models.CASCADE, related_name="passage_bindings"
    )
    predecessor = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    passage = models.ForeignKey(
        "evidence.Passage",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="bindings",
        help_text="The imported evidence passage, when the endpoint is one.",
    )
    passage_ref = models.CharField(max_length=512)
    source_revision_binding = models.JSONField()
    retrieval_observation_ref = models.CharField(max_length=512, blank=True, default="")
    representation_check = models.JSONField(null=True, blank=True)
    source_selector = models.JSONField()
    selector_profile = models.CharField(max_length=255)
    context_ref = models.CharField(max_length=512, blank=True, default="")
    transformation_ref = models.CharField(max_length=512, blank=True, default="")

    history = HistoricalRecords(no_db_index=["predecessor"])

    class Meta:
        ordering = ["link", "bound_in_revision"]
        indexes = [models.Index(fields=["passage_ref"], name="binding_passage_ref_idx")]

    def __str__(self) -> str:
        return self.passage_ref
