from grounding.models.bindings import PassageBinding, StatementBinding
from grounding.models.changes import ChangeNotification, ChangeNotificationLink
from grounding.models.evidence_sets import EvidenceSet, EvidenceSetMembership
from grounding.models.link import GroundingLink
from grounding.models.records import (
    AnchorObservation,
    Assessment,
    Disposal,
    Projection,
    Withdrawal,
)

__all__ = [
    "AnchorObservation",
    "Assessment",
    "ChangeNotification",
    "ChangeNotificationLink",
    "Disposal",
    "EvidenceSet",
    "EvidenceSetMembership",
    "GroundingLink",
    "PassageBinding",
    "Projection",
    "StatementBinding",
    "Withdrawal",
]
