"""The registry's operations. Views, serializers and admin call these; nothing
else writes the grounding models.

Each operation is a body `do_<name>`, which runs inside its caller's transaction,
and its public entry `<name>`, one durable transaction with its refusal audited
(`policies.actions`). Callers outside a transaction call the entries; callers that
compose operations in one transaction call the bodies (under
`policies.actions.refusal_audited`, with `refusal_context` naming the refused
event's fields as the entries do).
"""

from grounding.services._common import refusal_context
from grounding.services.anchoring import do_record_anchor_observation, record_anchor_observation
from grounding.services.assessments import bind_assessment, do_bind_assessment
from grounding.services.changes import do_notify_source_changes, notify_change
from grounding.services.disposal import dispose, do_dispose
from grounding.services.evidence_sets import (
    change_evidence_set,
    create_evidence_set,
    do_change_evidence_set,
    do_create_evidence_set,
)
from grounding.services.projection import do_project, project
from grounding.services.recheck import sweep_review_due
from grounding.services.register import do_register, do_register_many, register, register_many
from grounding.services.revise import do_revise, revise
from grounding.services.withdrawal import do_withdraw, withdraw

__all__ = [
    "bind_assessment",
    "change_evidence_set",
    "create_evidence_set",
    "dispose",
    "do_bind_assessment",
    "do_change_evidence_set",
    "do_create_evidence_set",
    "do_dispose",
    "do_notify_source_changes",
    "do_project",
    "do_record_anchor_observation",
    "do_register",
    "do_register_many",
    "do_revise",
    "do_withdraw",
    "notify_change",
    "project",
    "record_anchor_observation",
    "refusal_context",
    "register",
    "register_many",
    "revise",
    "sweep_review_due",
    "withdraw",
]
