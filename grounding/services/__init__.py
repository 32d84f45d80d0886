"""The registry's operations. Views, serializers and admin call these; nothing
else writes the grounding models."""

from grounding.services.anchoring import record_anchor_observation
from grounding.services.assessments import bind_assessment
from grounding.services.changes import notify_change, notify_source_changes
from grounding.services.disposal import dispose
from grounding.services.evidence_sets import change_evidence_set, create_evidence_set
from grounding.services.projection import project
from grounding.services.recheck import sweep_review_due
from grounding.services.register import register, register_many
from grounding.services.revise import revise
from grounding.services.withdrawal import withdraw

__all__ = [
    "bind_assessment",
    "change_evidence_set",
    "create_evidence_set",
    "dispose",
    "notify_change",
    "notify_source_changes",
    "project",
    "record_anchor_observation",
    "register",
    "register_many",
    "revise",
    "sweep_review_due",
    "withdraw",
]
