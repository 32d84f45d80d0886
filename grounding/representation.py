"""The link as a document (docs/api.md "The link as read"), before disclosure.

Built from a link instance (current) or the instance a history row reproduces
(`revisions/{n}`), plus the append-only records that existed at that revision.
Disclosure is applied afterwards by the reader (`grounding.reader`), the only path by which
any reader sees this document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from common.kernel.instants import rfc3339
from grounding.choices import DisplayState
from grounding.models import (
    AnchorObservation,
    Assessment,
    EvidenceSetMembership,
    GroundingLink,
    Withdrawal,
)


@dataclass
class LinkRecords:
    """Rows bound to the link as of the revision being represented."""

    assessments: list[Assessment] = field(default_factory=list)
    memberships: list[EvidenceSetMembership] = field(default_factory=list)
    withdrawal: Withdrawal | None = None
    anchor_observation: AnchorObservation | None = None


def link_document(link: GroundingLink, records: LinkRecords) -> dict[str, Any]:
    statement = link.current_statement
    binding = link.current_passage
    passage = binding.passage
    observation = records.anchor_observation
    doc: dict[str, Any] = {
        "grounding_id": str(link.grounding_id),
        "revision": link.revision,
        "master_ref": link.master_ref,
        "record_state": link.record_state,
        "recheck_state": link.recheck_state,
        "display_state": link.display_state,
        "dimension": link.dimension.name,
        "profile": link.profile.ref,
        "owner_ref": link.owner_ref,
        "related_link_refs": link.related_link_refs,
        "identity_decision": link.identity_decision,
        "statement": {
            "binding_id": str(statement.binding_id),
            "bound_in_revision": statement.bound_in_revision,
            "statement_ref": statement.statement_ref,
            "answer_revision_ref": statement.answer_revision_ref,
            "answer_revision_provisional": statement.answer_revision_provisional,
            "answer_selector": statement.answer_selector,
            "answer_representation": statement.answer_representation,
            "claim_scope": statement.claim_scope,
            "finalization_binding": statement.finalization_binding,
            "rebind_requirement": statement.rebind_requirement,
        },
        "passage": {
            "binding_id": str(binding.binding_id),
            "bound_in_revision": binding.bound_in_revision,
            "passage_id": str(passage.passage_id) if passage else None,
            "passage_ref": binding.passage_ref,
            "source_revision_binding": binding.source_revision_binding,
            "retrieval_observation_ref": binding.retrieval_observation_ref,
            "representation_check": binding.representation_check,
            "resolution_state": link.resolution_state,
            "access_label": passage.access_label if passage else None,
            "locator": passage.locator if passage else None,
            "canonical_url": passage.canonical_url if passage else None,
            "title": passage.title if passage else None,
            "excerpt": passage.text if passage else None,
        },
        "anchor": {
            "source_selector": binding.source_selector,
            "selector_profile": binding.selector_profile,
            "context_ref": binding.context_ref,
            "transformation_ref": binding.transformation_ref,
            "anchor_result": observation.anchor_result if observation else None,
        },
        "support": {
            "support_kind": link.support_kind,
            "support_scope": link.support_scope,
            "support_limits": link.support_limits,
            "support_verdict_ref": link.support_verdict_ref,
            "use_basis": link.use_basis,
            "generation_evidence_ref": link.generation_evidence_ref,
        },
        "assessments": [_assessment(a, link) for a in records.assessments],
        "evidence_sets": [_membership(m) for m in records.memberships],
        "time": {
            "asserted_at": rfc3339(link.asserted_at),
            "observed_at": rfc3339(link.observed_at),
            "applicability_interval": link.applicability_interval,
            "statement_time_ref": link.statement_time_ref,
            "review_due": rfc3339(link.review_due),
            "time_uncertainty": link.time_uncertainty,
        },
        "continuity": {
            "change_ref": link.change_ref,
            "predecessor_ref": link.predecessor_ref,
            "revision_reason": link.revision_reason,
            "disposition_policy_ref": link.disposition_policy_ref,
            "disposition_receipt_ref": link.disposition_receipt_ref,
        },
        "disclosure": {
            "disclosure_policy_ref": link.disclosure_policy_ref,
            "recipient_scope": link.recipient_scope,
            "redaction_profile": link.redaction_profile,
            "rights_ref": link.rights_ref,
            "safety_policy_ref": link.safety_policy_ref,
        },
        "projection": {
            "mapping_profile_ref": link.mapping_profile_ref,
            "endpoint_role_map": link.endpoint_role_map,
        },
        "withdrawal": _withdrawal(records.withdrawal),
        "withheld": [],
    }
    if link.display_state == DisplayState.VISIBLE:
        doc["displayed_verdict"] = link.displayed_verdict
    return doc


def _assessment(a: Assessment, link: GroundingLink) -> dict[str, Any]:
    return {
        "assessment_ref": a.assessment_ref,
        "reviewer_ref": a.reviewer_ref,
        "reviewer_kind": a.reviewer_kind,
        "authority_ref": a.authority_ref,
        "method_ref": a.method_ref,
        "verdict": a.verdict,
        "assessed_inputs": a.assessed_input_refs,
        "grounding_revision": a.grounding_revision,
        "recorded_revision": a.recorded_revision,
        "current": a.grounding_revision >= link.basis_revision,
        "rationale_ref": a.rationale_ref,
        "competing_assessment_refs": a.competing_assessment_refs,
        "selection_basis_ref": a.selection_basis_ref,
        "assessed_at": rfc3339(a.assessed_at),
        "metric_binding": a.metric_binding,
        "coverage_population": a.coverage_population,
        "uncertainty_binding": a.uncertainty_binding,
        "structural_report_ref": a.structural_report_ref,
    }


def _membership(m: EvidenceSetMembership) -> dict[str, Any]:
    return {
        "evidence_set_ref": m.evidence_set.evidence_set_ref,
        "membership_role": m.membership_role,
        # The set's own revision is not part of the link: set assessments and other
        # members' changes must not move this link's ETag.
        "added_in_set_revision": m.added_in_set_revision,
    }


def _withdrawal(w: Withdrawal | None) -> dict[str, Any] | None:
    if w is None:
        return None
    return {
        "reason": w.reason,
        "authority_ref": w.authority_ref,
        "scope": w.scope,
        "decision_ref": w.decision_ref,
        "withdrawn_at": rfc3339(w.recorded_at),
        "grounding_revision": w.grounding_revision,
    }
