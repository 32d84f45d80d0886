"""The rows a register item becomes: the candidate link at revision 1 and its
statement and passage bindings, built unsaved from a payload already checked.

Apart from `grounding.services.register` (the operation: its bodies and
declaration, each item's checks and preconditions, the master_ref conflict, the
write) because building is long and shares nothing with them: it reads no row and
refuses nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils import timezone

from common.kernel.identifiers import uuid7
from common.kernel.rows import new_instance
from evidence.choices import AccessLabel
from grounding.choices import (
    DisplayState,
    RebindRequirement,
    RecheckState,
    RecordState,
    ResolutionState,
    UseBasis,
)
from grounding.models import GroundingLink, PassageBinding, StatementBinding
from grounding.values.timestamps import parse_rfc3339


@dataclass
class Prepared:
    """One register item's rows, unsaved: the link and the bindings it points at."""

    link: GroundingLink
    statement: StatementBinding
    passage: PassageBinding


def build(*, actor, payload, dimension, profile, passage, passage_values) -> Prepared:
    """The rows of a payload `register` has checked (`grounding.services.register`),
    with what registration fills in: a new id, revision 1, record state candidate,
    display unassessed (restricted for a restricted source), the Dimension's policy
    refs and the profile's maps, observed now."""
    now = timezone.now()
    grounding_id = uuid7()
    statement_in = payload["statement"]
    anchor_in = payload["anchor"]
    support_in = payload["support"]
    time_in = payload.get("time") or {}
    disclosure_in = payload.get("disclosure") or {}
    statement = new_instance(
        StatementBinding,
        dict(
            link_id=grounding_id,
            bound_in_revision=1,
            statement_ref=statement_in["statement_ref"],
            answer_revision_ref=statement_in["answer_revision_ref"],
            answer_revision_provisional=statement_in.get("answer_revision_provisional", False),
            answer_selector=statement_in["answer_selector"],
            answer_representation=statement_in["answer_representation"],
            claim_scope=statement_in["claim_scope"],
            finalization_binding=statement_in.get("finalization_binding") or "",
            rebind_requirement=statement_in.get("rebind_requirement") or RebindRequirement.NONE,
        ),
    )
    binding = new_instance(
        PassageBinding,
        dict(
            link_id=grounding_id,
            bound_in_revision=1,
            passage=passage,
            passage_ref=passage_values["passage_ref"],
            source_revision_binding=passage_values["source_revision_binding"],
            retrieval_observation_ref=passage_values.get("retrieval_observation_ref") or "",
            representation_check=passage_values.get("representation_check"),
            source_selector=anchor_in["source_selector"],
            selector_profile=anchor_in["selector_profile"],
            context_ref=anchor_in.get("context_ref") or "",
            transformation_ref=anchor_in.get("transformation_ref") or "",
        ),
    )
    asserted_at = parse_rfc3339(time_in["asserted_at"]) if time_in.get("asserted_at") else None
    uncertainty = dict(time_in.get("time_uncertainty") or {})
    if asserted_at is None:
        # An unknown assertion time is kept as such, never invented.
        uncertainty.setdefault("asserted_at", "unknown")
    restricted = bool(passage and passage.access_label == AccessLabel.RESTRICTED)
    link = new_instance(
        GroundingLink,
        dict(
            grounding_id=grounding_id,
            master_ref=payload.get("master_ref") or None,
            dimension=dimension,
            profile=profile,
            owner_ref=payload["owner_ref"],
            record_state=RecordState.CANDIDATE,
            related_link_refs=payload.get("related_link_refs") or [],
            identity_decision=payload.get("identity_decision") or "",
            revision=1,
            basis_revision=1,
            current_statement=statement,
            current_passage=binding,
            resolution_state=ResolutionState.UNATTEMPTED,
            support_kind=support_in["support_kind"],
            support_scope=support_in["support_scope"],
            support_limits=support_in.get("support_limits"),
            use_basis=support_in.get("use_basis") or UseBasis.UNKNOWN,
            generation_evidence_ref=support_in.get("generation_evidence_ref") or "",
            asserted_at=asserted_at,
            observed_at=now,
            applicability_interval=time_in.get("applicability_interval"),
            statement_time_ref=time_in.get("statement_time_ref") or "",
            review_due=parse_rfc3339(time_in["review_due"]) if time_in.get("review_due") else None,
            time_uncertainty=uncertainty,
            recheck_state=RecheckState.CURRENT,
            disposition_policy_ref=dimension.disposition_policy_ref,
            disclosure_policy_ref=dimension.disclosure_policy_ref,
            recipient_scope=disclosure_in.get("recipient_scope")
            or {"recipient": f"dimension:{dimension.name}", "purpose": "curation"},
            redaction_profile=disclosure_in.get("redaction_profile") or "",
            rights_ref=disclosure_in.get("rights_ref") or "",
            display_state=DisplayState.RESTRICTED if restricted else DisplayState.UNASSESSED,
            safety_policy_ref=dimension.safety_policy_ref,
            mapping_profile_ref=profile.mapping_profile_ref,
            endpoint_role_map=profile.endpoint_role_map,
            created_by=actor,
        ),
    )
    return Prepared(link=link, statement=statement, passage=binding)
