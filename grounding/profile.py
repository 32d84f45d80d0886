"""WM-MEM-016 data elements → the model fields that hold them.

Machine-readable: one entry per data element of the profile's twelve layers
(`structure.bundles[].layers[].findings[].data_elements[]`), with its layer,
cardinality and required-ness as the profile states them. `tests/grounding/
test_profile_mapping.py` fails if a field named here is missing or its nullability
contradicts the cardinality.
"""

from __future__ import annotations

from typing import NamedTuple


class DataElement(NamedTuple):
    name: str
    layer: str
    cardinality: str
    required: bool
    field: str  # "app.Model.field"


DATA_ELEMENTS: tuple[DataElement, ...] = (
    DataElement("grounding_id", "identity", "1", True, "grounding.GroundingLink.grounding_id"),
    DataElement("owner_ref", "identity", "1", True, "grounding.GroundingLink.owner_ref"),
    DataElement("dimension_ref", "identity", "1", True, "grounding.GroundingLink.dimension"),
    DataElement("profile_ref", "identity", "1", True, "grounding.GroundingLink.profile"),
    DataElement("record_state", "identity", "1", True, "grounding.GroundingLink.record_state"),
    DataElement(
        "related_link_refs", "identity", "0..n", False, "grounding.GroundingLink.related_link_refs"
    ),
    DataElement(
        "identity_decision", "identity", "0..1", False, "grounding.GroundingLink.identity_decision"
    ),
    DataElement(
        "statement_ref", "statement", "1", True, "grounding.StatementBinding.statement_ref"
    ),
    DataElement(
        "answer_revision_ref",
        "statement",
        "1",
        True,
        "grounding.StatementBinding.answer_revision_ref",
    ),
    DataElement(
        "answer_selector", "statement", "1", True, "grounding.StatementBinding.answer_selector"
    ),
    DataElement(
        "answer_representation",
        "statement",
        "1",
        True,
        "grounding.StatementBinding.answer_representation",
    ),
    DataElement("claim_scope", "statement", "1", True, "grounding.StatementBinding.claim_scope"),
    DataElement(
        "finalization_binding",
        "statement",
        "0..1",
        False,
        "grounding.StatementBinding.finalization_binding",
    ),
    DataElement(
        "rebind_requirement",
        "statement",
        "1",
        True,
        "grounding.StatementBinding.rebind_requirement",
    ),
    DataElement("passage_ref", "passage", "1", True, "grounding.PassageBinding.passage_ref"),
    DataElement(
        "source_revision_binding",
        "passage",
        "1",
        True,
        "grounding.PassageBinding.source_revision_binding",
    ),
    DataElement(
        "retrieval_observation_ref",
        "passage",
        "0..1",
        False,
        "grounding.PassageBinding.retrieval_observation_ref",
    ),
    DataElement(
        "representation_check",
        "passage",
        "0..1",
        False,
        "grounding.PassageBinding.representation_check",
    ),
    DataElement(
        "resolution_state", "passage", "1", True, "grounding.GroundingLink.resolution_state"
    ),
    DataElement(
        "source_selector", "selector", "1", True, "grounding.PassageBinding.source_selector"
    ),
    DataElement(
        "selector_profile", "selector", "1", True, "grounding.PassageBinding.selector_profile"
    ),
    DataElement(
        "anchor_result", "selector", "1", True, "grounding.AnchorObservation.anchor_result"
    ),
    DataElement("context_ref", "selector", "0..1", False, "grounding.PassageBinding.context_ref"),
    DataElement(
        "transformation_ref",
        "selector",
        "0..1",
        False,
        "grounding.PassageBinding.transformation_ref",
    ),
    DataElement("support_kind", "assertion", "1", True, "grounding.GroundingLink.support_kind"),
    DataElement("support_scope", "assertion", "1", True, "grounding.GroundingLink.support_scope"),
    DataElement(
        "support_limits", "assertion", "0..1", False, "grounding.GroundingLink.support_limits"
    ),
    DataElement(
        "support_verdict_ref",
        "assertion",
        "0..1",
        False,
        "grounding.GroundingLink.support_verdict_ref",
    ),
    DataElement("use_basis", "assertion", "1", True, "grounding.GroundingLink.use_basis"),
    DataElement(
        "generation_evidence_ref",
        "assertion",
        "0..1",
        False,
        "grounding.GroundingLink.generation_evidence_ref",
    ),
    DataElement(
        "evidence_set_ref",
        "evidence-set",
        "0..1",
        False,
        "grounding.EvidenceSetMembership.evidence_set",
    ),
    DataElement(
        "member_link_refs", "evidence-set", "0..n", False, "grounding.EvidenceSetMembership.link"
    ),
    DataElement(
        "membership_role",
        "evidence-set",
        "0..1",
        False,
        "grounding.EvidenceSetMembership.membership_role",
    ),
    DataElement(
        "combination_rule_ref",
        "evidence-set",
        "0..1",
        False,
        "grounding.EvidenceSet.combination_rule_ref",
    ),
    DataElement(
        "dependence_ref", "evidence-set", "0..1", False, "grounding.EvidenceSet.dependence_ref"
    ),
    DataElement(
        "set_assessment_ref",
        "evidence-set",
        "0..1",
        False,
        "grounding.EvidenceSet.set_assessment_ref",
    ),
    DataElement(
        "missing_members",
        "evidence-set",
        "0..n",
        False,
        "grounding.EvidenceSet.declared_missing_members",
    ),
    DataElement("assessment_ref", "review", "0..1", False, "grounding.Assessment.assessment_ref"),
    DataElement("reviewer_ref", "review", "0..1", False, "grounding.Assessment.reviewer_ref"),
    DataElement("authority_ref", "review", "0..1", False, "grounding.Assessment.authority_ref"),
    DataElement("method_ref", "review", "0..1", False, "grounding.Assessment.method_ref"),
    DataElement(
        "assessed_input_refs", "review", "0..n", False, "grounding.Assessment.assessed_input_refs"
    ),
    DataElement("rationale_ref", "review", "0..1", False, "grounding.Assessment.rationale_ref"),
    DataElement(
        "competing_assessment_refs",
        "review",
        "0..n",
        False,
        "grounding.Assessment.competing_assessment_refs",
    ),
    DataElement(
        "selection_basis_ref", "review", "0..1", False, "grounding.Assessment.selection_basis_ref"
    ),
    DataElement(
        "metric_binding", "measurement", "0..1", False, "grounding.Assessment.metric_binding"
    ),
    DataElement(
        "coverage_population",
        "measurement",
        "0..1",
        False,
        "grounding.Assessment.coverage_population",
    ),
    DataElement(
        "uncertainty_binding",
        "measurement",
        "0..1",
        False,
        "grounding.Assessment.uncertainty_binding",
    ),
    DataElement(
        "structural_report_ref",
        "measurement",
        "0..1",
        False,
        "grounding.Assessment.structural_report_ref",
    ),
    DataElement("asserted_at", "time", "0..1", False, "grounding.GroundingLink.asserted_at"),
    DataElement("observed_at", "time", "1", True, "grounding.GroundingLink.observed_at"),
    DataElement(
        "applicability_interval",
        "time",
        "0..1",
        False,
        "grounding.GroundingLink.applicability_interval",
    ),
    DataElement(
        "statement_time_ref", "time", "0..1", False, "grounding.GroundingLink.statement_time_ref"
    ),
    DataElement("assessed_at", "time", "0..1", False, "grounding.Assessment.assessed_at"),
    DataElement("review_due", "time", "0..1", False, "grounding.GroundingLink.review_due"),
    DataElement("time_uncertainty", "time", "1", True, "grounding.GroundingLink.time_uncertainty"),
    DataElement("change_ref", "revision", "0..1", False, "grounding.GroundingLink.change_ref"),
    DataElement("recheck_state", "revision", "1", True, "grounding.GroundingLink.recheck_state"),
    DataElement(
        "predecessor_ref", "revision", "0..1", False, "grounding.GroundingLink.predecessor_ref"
    ),
    DataElement(
        "revision_reason", "revision", "0..1", False, "grounding.GroundingLink.revision_reason"
    ),
    DataElement("withdrawal_record", "revision", "0..1", False, "grounding.Withdrawal.link"),
    DataElement(
        "disposition_policy_ref",
        "revision",
        "1",
        True,
        "grounding.GroundingLink.disposition_policy_ref",
    ),
    DataElement(
        "disposition_receipt_ref",
        "revision",
        "0..1",
        False,
        "grounding.GroundingLink.disposition_receipt_ref",
    ),
    DataElement(
        "disclosure_policy_ref",
        "disclosure",
        "1",
        True,
        "grounding.GroundingLink.disclosure_policy_ref",
    ),
    DataElement(
        "recipient_scope", "disclosure", "1", True, "grounding.GroundingLink.recipient_scope"
    ),
    DataElement(
        "redaction_profile",
        "disclosure",
        "0..1",
        False,
        "grounding.GroundingLink.redaction_profile",
    ),
    DataElement("rights_ref", "disclosure", "0..1", False, "grounding.GroundingLink.rights_ref"),
    DataElement("display_state", "disclosure", "1", True, "grounding.GroundingLink.display_state"),
    DataElement(
        "safety_policy_ref", "disclosure", "1", True, "grounding.GroundingLink.safety_policy_ref"
    ),
    DataElement(
        "mapping_profile_ref",
        "projection",
        "1",
        True,
        "grounding.GroundingLink.mapping_profile_ref",
    ),
    DataElement(
        "endpoint_role_map", "projection", "1", True, "grounding.GroundingLink.endpoint_role_map"
    ),
    DataElement("loss_report", "projection", "0..n", False, "grounding.Projection.loss_report"),
    DataElement(
        "projection_ref", "projection", "0..1", False, "grounding.Projection.projection_id"
    ),
    DataElement(
        "projection_revision",
        "projection",
        "0..1",
        False,
        "grounding.Projection.projection_revision",
    ),
    DataElement(
        "conformance_evidence_ref",
        "projection",
        "0..1",
        False,
        "grounding.Projection.conformance_evidence_ref",
    ),
)

BY_NAME: dict[str, DataElement] = {element.name: element for element in DATA_ELEMENTS}
