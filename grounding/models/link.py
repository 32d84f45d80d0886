"""The aggregate root: one grounding link between one statement occurrence and
one passage revision."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from simple_history.models import HistoricalRecords

from common.kernel.history import TrackedManager
from common.kernel.identifiers import uuid7
from grounding.choices import (
    DisplayState,
    RecheckState,
    RecordState,
    ResolutionState,
    SupportKind,
    UseBasis,
)


class GroundingLink(models.Model):
    # -- identity
    grounding_id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    master_ref = models.CharField(
        max_length=512,
        null=True,
        blank=True,
        # Unique per Dimension (the constraint below): a ref is a tenant's own name, and
        # another Dimension's use of it is neither a conflict nor a thing to disclose.
        help_text="Authoritative master-system id or governed IRI, when one is supplied.",
    )
    # Indexed by the (dimension, …) indexes below; a lone index would only cost writes.
    dimension = models.ForeignKey(
        "policies.Dimension", on_delete=models.PROTECT, related_name="links", db_index=False
    )
    profile = models.ForeignKey("policies.Profile", on_delete=models.PROTECT, related_name="links")
    owner_ref = models.CharField(max_length=255)
    record_state = models.CharField(
        max_length=16, choices=RecordState.choices, default=RecordState.CANDIDATE
    )
    related_link_refs = models.JSONField(default=list, blank=True)
    identity_decision = models.TextField(blank=True, default="")
    revision = models.PositiveIntegerField(default=1)
    # Revision since which assessments count as current: bumped when an endpoint,
    # the anchor or the support interpretation changes (profile patch_rules).
    basis_revision = models.PositiveIntegerField(default=1)

    # -- current bindings (immutable rows; revising makes new ones)
    current_statement = models.ForeignKey(
        "grounding.StatementBinding", on_delete=models.PROTECT, related_name="+", null=True
    )
    current_passage = models.ForeignKey(
        "grounding.PassageBinding", on_delete=models.PROTECT, related_name="+", null=True
    )
    current_anchor_observation = models.ForeignKey(
        "grounding.AnchorObservation",
        on_delete=models.PROTECT,
        related_name="+",
        null=True,
        blank=True,
    )
    resolution_state = models.CharField(
        max_length=16, choices=ResolutionState.choices, default=ResolutionState.UNATTEMPTED
    )

    # -- support interpretation
    support_kind = models.CharField(max_length=16, choices=SupportKind.choices)
    support_scope = models.JSONField()
    support_limits = models.JSONField(null=True, blank=True)
    support_verdict_ref = models.CharField(max_length=512, blank=True, default="")
    use_basis = models.CharField(max_length=20, choices=UseBasis.choices, default=UseBasis.UNKNOWN)
    generation_evidence_ref = models.CharField(max_length=512, blank=True, default="")

    # -- time
    asserted_at = models.DateTimeField(null=True, blank=True)
    observed_at = models.DateTimeField()
    applicability_interval = models.JSONField(null=True, blank=True)
    statement_time_ref = models.CharField(max_length=512, blank=True, default="")
    review_due = models.DateTimeField(null=True, blank=True)
    time_uncertainty = models.JSONField(default=dict)

    # -- revision and withdrawal
    change_ref = models.CharField(max_length=512, blank=True, default="")
    recheck_state = models.CharField(
        max_length=16, choices=RecheckState.choices, default=RecheckState.CURRENT
    )
    predecessor_ref = models.CharField(max_length=512, blank=True, default="")
    revision_reason = models.TextField(blank=True, default="")
    disposition_policy_ref = models.CharField(max_length=255)
    disposition_receipt_ref = models.CharField(max_length=512, blank=True, default="")

    # -- disclosure
    disclosure_policy_ref = models.CharField(max_length=255)
    recipient_scope = models.JSONField(default=dict)
    redaction_profile = models.CharField(max_length=255, blank=True, default="")
    rights_ref = models.CharField(max_length=255, blank=True, default="")
    display_state = models.CharField(
        max_length=16, choices=DisplayState.choices, default=DisplayState.UNASSESSED
    )
    displayed_verdict = models.CharField(max_length=16, blank=True, default="")
    safety_policy_ref = models.CharField(max_length=255)

    # -- projection mapping
    mapping_profile_ref = models.CharField(max_length=255)
    endpoint_role_map = models.JSONField(default=dict)

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )
    updated_at = models.DateTimeField(auto_now=True)

    objects = TrackedManager()
    # History is read by grounding_id (and date); indexing the copied reference
    # columns would only slow every write down.
    history = HistoricalRecords(
        excluded_fields=["updated_at"],
        no_db_index=[
            "master_ref",
            "dimension",
            "profile",
            "current_statement",
            "current_passage",
            "current_anchor_observation",
            "created_by",
        ],
    )

    class Meta:
        ordering = ["-grounding_id"]
        # Lists filter on one state within a Dimension and page by -grounding_id (time
        # order): each index serves the filter and the order, so a page of 50 reads 50
        # rows, not the whole Dimension.
        indexes = [
            models.Index(
                fields=["dimension", "record_state", "-grounding_id"], name="link_dim_record_idx"
            ),
            models.Index(
                fields=["dimension", "recheck_state", "-grounding_id"], name="link_dim_recheck_idx"
            ),
            models.Index(
                fields=["dimension", "display_state", "-grounding_id"], name="link_dim_display_idx"
            ),
            models.Index(
                fields=["dimension", "support_kind", "-grounding_id"], name="link_dim_support_idx"
            ),
            models.Index(fields=["dimension", "-grounding_id"], name="link_dim_order_idx"),
            # The other documented orderings (grounding.api.filters.ORDERINGS), each with
            # its grounding_id tie-break: walked forwards or backwards, in either
            # direction a page (and a cursor's row comparison) reads a page of rows.
            models.Index(
                fields=["dimension", "observed_at", "grounding_id"], name="link_dim_observed_idx"
            ),
            models.Index(
                fields=["dimension", "revision", "grounding_id"], name="link_dim_revision_idx"
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(revision__gte=models.F("basis_revision")),
                name="link_basis_revision_not_ahead",
            ),
            # Its index also serves the (dimension, master_ref) lookups of register and
            # from-citations; links without a master_ref are left out of it.
            models.UniqueConstraint(
                fields=["dimension", "master_ref"],
                condition=models.Q(master_ref__isnull=False),
                name="link_master_ref_unique_per_dimension",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.grounding_id}@{self.revision}"

    @property
    def revision_ref(self) -> str:
        return f"urn:grounding:{self.grounding_id}@{self.revision}"
