"""withdraw: remove a link from positive display under a recorded decision.

Lawful history stays: nothing is deleted, the source and past answers are untouched.
"""

from __future__ import annotations

from typing import Any

from grounding.choices import RecheckState, RecordState
from grounding.models import Withdrawal
from grounding.services import inputs
from grounding.services._common import (
    lock_link,
    operation,
    refresh_display,
    refuse_invalid,
    require_not_withdrawn,
    require_revision,
    save_revision,
)
from policies import audit
from policies.choices import Role
from policies.services import require_active, require_published, require_role


@operation("withdraw")
def withdraw(
    *, actor, grounding_id, expected_revision: int, withdrawal: dict[str, Any]
) -> Withdrawal:
    link = lock_link(grounding_id)
    require_active(link.dimension)
    require_role(actor, link.dimension, Role.ACCESS_STEWARD, Role.CURATOR)
    require_published(link.profile, allow_retired=True)
    require_not_withdrawn(link)
    require_revision(link, expected_revision)
    refuse_invalid(inputs.validate_group(inputs.WITHDRAWAL, withdrawal, pointer=""))
    record = Withdrawal.objects.create(
        link=link,
        grounding_revision=link.revision,
        recorded_revision=link.revision + 1,
        recorded_by=actor,
        reason=withdrawal["reason"],
        authority_ref=withdrawal["authority_ref"],
        scope=withdrawal.get("scope") or "display",
        decision_ref=withdrawal.get("decision_ref") or "",
    )
    link.record_state = RecordState.WITHDRAWN
    link.recheck_state = RecheckState.WITHDRAWN
    refresh_display(link)
    save_revision(link, actor=actor, reason=f"withdrawn: {record.reason}")
    audit.record(
        actor=actor,
        action="withdraw",
        grounding_id=link.grounding_id,
        dimension=link.dimension,
        expected_revision=expected_revision,
        resulting_revision=link.revision,
        decision_ref=record.decision_ref or record.authority_ref,
    )
    return record
