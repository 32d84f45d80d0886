"""Evidence sets: explicitly qualified groups of links. A set's assessment is the
set's own; it is never copied to its members."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from simple_history.models import HistoricalRecords

from common.kernel.history import TrackedManager
from common.kernel.identifiers import uuid7
from grounding.choices import MembershipRole


class EvidenceSet(models.Model):
    evidence_set_id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    # Unique per Dimension (the constraint below): the same ref in two Dimensions is two
    # sets, and neither tells of the other.
    evidence_set_ref = models.CharField(max_length=512)
    dimension = models.ForeignKey(
        "policies.Dimension",
        on_delete=models.PROTECT,
        related_name="evidence_sets",
        db_index=False,  # the (dimension, evidence_set_ref) constraint leads with it
    )
    combination_rule_ref = models.CharField(max_length=512, blank=True, default="")
    dependence_ref = models.CharField(max_length=512, blank=True, default="")
    set_assessment_ref = models.CharField(max_length=512, blank=True, default="")
    set_assessment_revision = models.PositiveIntegerField(
        null=True, blank=True, help_text="The set revision its assessment was made for."
    )
    declared_missing_members = models.JSONField(
        default=list, blank=True, help_text="Required premises known to be missing (refs)."
    )
    revision = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )

    objects = TrackedManager()
    history = HistoricalRecords()

    class Meta:
        ordering = ["evidence_set_ref"]
        constraints = [
            models.UniqueConstraint(
                fields=["dimension", "evidence_set_ref"],
                name="evidence_set_ref_unique_per_dimension",
            )
        ]

    def __str__(self) -> str:
        return self.evidence_set_ref


class EvidenceSetMembership(models.Model):
    membership_id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    evidence_set = models.ForeignKey(
        EvidenceSet, on_delete=models.CASCADE, related_name="memberships"
    )
    link = models.ForeignKey(
        "grounding.GroundingLink", on_delete=models.PROTECT, related_name="set_memberships"
    )
    membership_role = models.CharField(max_length=16, choices=MembershipRole.choices)
    added_in_set_revision = models.PositiveIntegerField()
    removed_in_set_revision = models.PositiveIntegerField(null=True, blank=True)

    objects = TrackedManager()
    history = HistoricalRecords()

    class Meta:
        ordering = ["evidence_set", "added_in_set_revision"]
        constraints = [
            models.UniqueConstraint(
                fields=["evidence_set", "link"],
                condition=models.Q(removed_in_set_revision__isnull=True),
                name="membership_one_active_per_link",
            )
        ]

    def __str__(self) -> str:
        return f"{self.link_id} as {self.membership_role} in {self.evidence_set_id}"

    @property
    def is_active(self) -> bool:
        return self.removed_in_set_revision is None
