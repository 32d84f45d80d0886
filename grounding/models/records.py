"""Append-only records bound to a link revision: anchor observations, assessments,
withdrawals, disposals and projections. None is ever edited; each names the link
revision it was made against and the revision it produced."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from common.kernel.history import AppendOnlyModel
from common.kernel.identifiers import uuid7
from grounding.choices import ProjectionFormat, ResolutionState, ReviewerKind, Verdict


def _actor_fk() -> models.ForeignKey:
    return models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )


class LinkRecord(AppendOnlyModel):
    """Common shape: which link, against which revision, producing which revision."""

    link = models.ForeignKey("grounding.GroundingLink", on_delete=models.CASCADE)
    grounding_revision = models.PositiveIntegerField(
        help_text="The link revision this record was made against."
    )
    recorded_revision = models.PositiveIntegerField(
        help_text="The link revision this record produced."
    )
    recorded_at = models.DateTimeField(auto_now_add=True)
    recorded_by = _actor_fk()

    class Meta(AppendOnlyModel.Meta):
        abstract = True


class AnchorObservation(LinkRecord):
    observation_id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    link = models.ForeignKey(
        "grounding.GroundingLink", on_delete=models.CASCADE, related_name="anchor_observations"
    )
    passage_binding = models.ForeignKey(
        "grounding.PassageBinding", on_delete=models.PROTECT, related_name="anchor_observations"
    )
    resolver_ref = models.CharField(max_length=255)
    anchor_result = models.JSONField()
    resolution_state = models.CharField(max_length=16, choices=ResolutionState.choices)

    class Meta:
        ordering = ["link", "recorded_revision"]

    def __str__(self) -> str:
        return f"{self.resolver_ref}: {self.resolution_state}"


class Assessment(LinkRecord):
    """A supplied judgment, bound with its provenance. Never computed here."""

    assessment_id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    link = models.ForeignKey(
        "grounding.GroundingLink", on_delete=models.CASCADE, related_name="assessments"
    )
    assessment_ref = models.CharField(max_length=512)
    reviewer_ref = models.CharField(max_length=512)
    reviewer_kind = models.CharField(max_length=16, choices=ReviewerKind.choices)
    authority_ref = models.CharField(max_length=512, blank=True, default="")
    method_ref = models.CharField(max_length=512)
    verdict = models.CharField(max_length=16, choices=Verdict.choices)
    assessed_input_refs = models.JSONField(
        help_text="The inputs as supplied (assessed_inputs), pinned revisions included."
    )
    statement_binding = models.ForeignKey(
        "grounding.StatementBinding", on_delete=models.PROTECT, related_name="+"
    )
    passage_binding = models.ForeignKey(
        "grounding.PassageBinding", on_delete=models.PROTECT, related_name="+"
    )
    rationale_ref = models.CharField(max_length=512, blank=True, default="")
    competing_assessment_refs = models.JSONField(default=list, blank=True)
    selection_basis_ref = models.CharField(max_length=512, blank=True, default="")
    assessed_at = models.DateTimeField(null=True, blank=True)
    # -- measurement layer (supplied values; no threshold is applied here)
    metric_binding = models.JSONField(null=True, blank=True)
    coverage_population = models.JSONField(null=True, blank=True)
    uncertainty_binding = models.JSONField(null=True, blank=True)
    structural_report_ref = models.CharField(max_length=512, blank=True, default="")

    class Meta:
        ordering = ["link", "recorded_revision"]
        constraints = [
            models.UniqueConstraint(
                fields=["link", "assessment_ref"], name="assessment_ref_unique_per_link"
            )
        ]

    def __str__(self) -> str:
        # Titles and links show this: the verdict is a disclosable value (the reader's).
        return self.assessment_ref


class Withdrawal(LinkRecord):
    """The withdrawal_record: actor, reason, time and scope; distinct from deletion."""

    withdrawal_id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    link = models.OneToOneField(
        "grounding.GroundingLink", on_delete=models.CASCADE, related_name="withdrawal"
    )
    reason = models.TextField()
    authority_ref = models.CharField(max_length=512)
    scope = models.CharField(max_length=255, default="display")
    decision_ref = models.CharField(max_length=512, blank=True, default="")

    def __str__(self) -> str:
        return f"withdrawal of {self.link_id}"


class Disposal(LinkRecord):
    """The external storage service's disposal receipt; what remains is a tombstone."""

    disposal_id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    link = models.OneToOneField(
        "grounding.GroundingLink", on_delete=models.CASCADE, related_name="disposal"
    )
    receipt_ref = models.CharField(max_length=512)
    policy_ref = models.CharField(max_length=512)
    purged = models.JSONField(default=dict, help_text="Counts of purged rows by table.")

    def __str__(self) -> str:
        return f"disposal of {self.link_id}"


class Projection(AppendOnlyModel):
    """An export artifact prepared for a recipient; no publication is implied."""

    projection_id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    link = models.ForeignKey(
        "grounding.GroundingLink", on_delete=models.CASCADE, related_name="projections"
    )
    projection_revision = models.PositiveIntegerField()
    format = models.CharField(max_length=16, choices=ProjectionFormat.choices)
    recipient_scope = models.CharField(max_length=255)
    purpose = models.CharField(max_length=128)
    decision_ref = models.CharField(max_length=255)
    mapping_profile_ref = models.CharField(max_length=255)
    withheld = models.JSONField(default=list)
    loss_report = models.JSONField(default=list)
    sha256 = models.CharField(max_length=64)
    conformance_evidence_ref = models.CharField(max_length=512, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = _actor_fk()

    class Meta:
        ordering = ["link", "created_at"]

    def __str__(self) -> str:
        return self.projection_ref

    @property
    def projection_ref(self) -> str:
        return f"urn:grounding:projection:{self.projection_id}"
