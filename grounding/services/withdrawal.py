"""withdraw and dispose.

Withdrawal removes a link from positive display under a recorded decision and keeps
lawful history. Disposal records the external storage service's receipt and then
purges local copied payloads (selector quote text) from current rows and their
history rows, leaving a tombstone of ids, states, times, receipt and policy refs.
"""

from __future__ import annotations

from typing import Any

from grounding.choices import RecheckState, RecordState
from grounding.models import Disposal, GroundingLink, PassageBinding, Withdrawal
from grounding.services import inputs
from grounding.services._common import (
    lock_link,
    operation,
    refresh_display,
    refuse_invalid,
    require_not_withdrawn,
    require_revision,
    save_revision,
    save_tracked,
)
from policies import audit
from policies.choices import Role
from policies.refusals import Refusal
from policies.services import require_active, require_published, require_role

WITHDRAWAL_FIELDS = {
    "reason": "ref",
    "authority_ref": "ref",
    "scope": "opt_ref",
    "decision_ref": "opt_ref",
}
DISPOSAL_FIELDS = {"receipt_ref": "ref", "policy_ref": "ref"}
# Selector members that copy source text; positions and types are not payloads.
_COPIED_SELECTOR_KEYS = ("exact", "prefix", "suffix", "value")


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
    refuse_invalid(
        inputs.validate_group(
            "withdrawal",
            withdrawal,
            fields=WITHDRAWAL_FIELDS,
            required=("reason", "authority_ref"),
            pointer="",
        )
    )
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


@operation("dispose")
def dispose(*, actor, grounding_id, expected_revision: int, disposal: dict[str, Any]) -> Disposal:
    link = lock_link(grounding_id)
    require_active(link.dimension)
    require_role(actor, link.dimension, Role.ACCESS_STEWARD)
    require_revision(link, expected_revision)
    if link.record_state == RecordState.DISPOSED:
        raise Refusal("link_disposed", "the link has already been disposed.")
    refuse_invalid(
        inputs.validate_group(
            "disposal",
            disposal,
            fields=DISPOSAL_FIELDS,
            required=("receipt_ref", "policy_ref"),
            pointer="",
        )
    )
    purged = _purge_copied_payloads(link, actor=actor)
    record = Disposal.objects.create(
        link=link,
        grounding_revision=link.revision,
        recorded_revision=link.revision + 1,
        recorded_by=actor,
        receipt_ref=disposal["receipt_ref"],
        policy_ref=disposal["policy_ref"],
        purged=purged,
    )
    link.record_state = RecordState.DISPOSED
    link.recheck_state = RecheckState.WITHDRAWN
    link.disposition_receipt_ref = record.receipt_ref
    refresh_display(link)
    save_revision(link, actor=actor, reason="disposed under a recorded receipt")
    audit.record(
        actor=actor,
        action="dispose",
        grounding_id=link.grounding_id,
        dimension=link.dimension,
        expected_revision=expected_revision,
        resulting_revision=link.revision,
        decision_ref=record.policy_ref,
        references={"receipt_ref": record.receipt_ref},
    )
    return record


def purge_selector(selector: Any) -> Any:
    """The selector with copied source text removed, keeping type and coordinates."""
    if isinstance(selector, list):
        return [purge_selector(item) for item in selector]
    if not isinstance(selector, dict):
        return selector
    kept = {
        key: purge_selector(value)
        for key, value in selector.items()
        if key not in _COPIED_SELECTOR_KEYS
    }
    if any(key in selector for key in _COPIED_SELECTOR_KEYS):
        kept["purged"] = True
    return kept


def _purge_copied_payloads(link: GroundingLink, *, actor) -> dict[str, int]:
    """Purge current binding rows (writing their history) and then every history row."""
    counts = {"passage_bindings": 0, "passage_binding_history": 0}
    for binding in PassageBinding.objects.filter(link=link):
        purged = purge_selector(binding.source_selector)
        if purged != binding.source_selector:
            binding.source_selector = purged
            binding._disposal_purge = True
            save_tracked(binding, actor=actor, reason="disposal purge")
            counts["passage_bindings"] += 1
    history = PassageBinding.history.model.objects.filter(link_id=link.grounding_id)
    for row in history.only("history_id", "source_selector"):
        purged = purge_selector(row.source_selector)
        if purged != row.source_selector:
            # History rows are rewritten only here: a lawful disposal must not leave
            # the purged payload behind in history.
            type(row).objects.filter(pk=row.pk).update(source_selector=purged)
            counts["passage_binding_history"] += 1
    return counts
