"""withdraw: remove a link from positive display under a recorded decision.

Lawful history stays: nothing is deleted, the source and past answers are untouched.
"""

from __future__ import annotations

from typing import Any

from grounding import bodies
from grounding.choices import RecheckState, RecordState
from grounding.models import Withdrawal
from grounding.services import inputs
from grounding.services._common import (
    OPEN_LINK_REFUSALS,
    open_link,
    refresh_display,
    refusal_context,
    refuse_invalid,
    save_revision,
)
from policies import audit
from policies.actions import composable
from policies.choices import Role
from policies.operations import Operation


@composable
def do_withdraw(
    *, actor, grounding_id, expected_revision: int, withdrawal: dict[str, Any]
) -> Withdrawal:
    link = open_link(
        grounding_id,
        actor=actor,
        roles=WITHDRAW.roles,
        expected_revision=expected_revision,
        allow_retired=True,
    )
    refuse_invalid(inputs.validate_group(inputs.of(WITHDRAW), withdrawal, pointer=""))
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
        action=WITHDRAW.action,
        grounding_id=link.grounding_id,
        dimension=link.dimension,
        expected_revision=expected_revision,
        resulting_revision=link.revision,
        decision_ref=record.decision_ref or record.authority_ref,
    )
    return record


WITHDRAW = Operation(
    "withdraw",
    body=do_withdraw,
    input=bodies.WithdrawalSerializer,
    output="grounding.api.serializers.WithdrawalResultSerializer",
    roles=(Role.ACCESS_STEWARD, Role.CURATOR),
    refusals=OPEN_LINK_REFUSALS,
    success=(201,),
    headers=("ETag",),
    conditional=True,
    summary="Withdraw the link from positive display under a recorded decision",
    context=refusal_context,
)
withdraw = WITHDRAW.entry
