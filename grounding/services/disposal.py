"""dispose: record the external storage service's disposal receipt, then purge the
local copied payloads of the link from current rows and their history rows.

What remains is a tombstone: ids, states, times, the receipt and policy refs, and
digests. Copied payloads are the selector quote text, and the excerpt and title of
the disposing Dimension's evidence passages no undisposed link of that Dimension
binds: the link's own passages, and every other occurrence in that Dimension (bound
or not) of a text that no undisposed link of it binds any more. Text still bound by
another undisposed link of the Dimension stays for it (that link's retention governs
it); the disposed link, read only as its tombstone, no longer reaches it.

A Dimension is a boundary (docs/api.md "Tenancy"): another Dimension's copies of the
same bytes (its passages, their history rows, its envelopes) are its own, untouched
by this disposal, and `purged` counts only the disposing Dimension's rows.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from common.kernel.refusals import Refusal
from evidence import retention
from evidence.models import Passage
from grounding import bodies
from grounding.choices import RecheckState, RecordState
from grounding.models import Disposal, GroundingLink, PassageBinding
from grounding.services import disposal_journal, inputs
from grounding.services._common import (
    open_link,
    refresh_display,
    refusal_context,
    refuse_invalid,
    save_revision,
    save_tracked,
)
from policies import audit
from policies.actions import composable
from policies.choices import Role
from policies.models import IdempotencyKey
from policies.operations import Operation
from transparency import keys, sequencer

# Selector members that copy source text; positions and types are not payloads.
_COPIED_SELECTOR_KEYS = ("exact", "prefix", "suffix", "value")


@composable
def do_dispose(
    *,
    actor,
    grounding_id,
    expected_revision: int,
    disposal: dict[str, Any],
    reapplying: dict[str, str] | None = None,
) -> Disposal:
    """`reapplying`: the journal's references of the disposal this one applies again
    after a restore (reapply_disposals), kept with its audit event."""
    link = open_link(
        grounding_id,
        actor=actor,
        roles=DISPOSE.roles,
        expected_revision=expected_revision,
        check_profile=False,
        live=False,
    )
    if link.record_state == RecordState.DISPOSED:
        raise Refusal("link_disposed", "the link has already been disposed.")
    refuse_invalid(inputs.validate_group(inputs.of(DISPOSE), disposal, pointer=""))
    # Every write queued before this one gets its leaf (its commitments made from the
    # rows as stored) before the text is purged and the keys destroyed.
    sequencer.integrate()
    purged = _purge_copied_payloads(link, actor=actor)
    passage_ids = _passages_to_purge(link)
    purged.update(
        retention.purge_passages(dimension=link.dimension, passage_ids=passage_ids, actor=actor)
    )
    record = Disposal.objects.create(
        link=link,
        grounding_revision=link.revision,
        recorded_revision=link.revision + 1,
        recorded_by=actor,
        receipt_ref=disposal["receipt_ref"],
        policy_ref=disposal["policy_ref"],
        purged=purged,
    )
    # The keys of the link's and the purged passages' commitments go with the text: no
    # guessed text can be confirmed against them; the log and its proofs stay valid.
    keys.destroy(links=[link.grounding_id], passages=passage_ids, by=record.disposal_id)
    link.record_state = RecordState.DISPOSED
    link.recheck_state = RecheckState.WITHDRAWN
    link.disposition_receipt_ref = record.receipt_ref
    refresh_display(link)
    save_revision(link, actor=actor, reason="disposed under a recorded receipt")
    # Stored first answers of idempotent writes may copy what was just purged.
    IdempotencyKey.forget_answers_about(str(link.grounding_id))
    event = audit.record(
        actor=actor,
        action=DISPOSE.action,
        grounding_id=link.grounding_id,
        dimension=link.dimension,
        expected_revision=expected_revision,
        resulting_revision=link.revision,
        decision_ref=record.policy_ref,
        references={"receipt_ref": record.receipt_ref, **(reapplying or {})},
    )
    # Last, so a disposal refused above is never journaled; an unwritable journal
    # refuses this one (docs/architecture.md "Restoring from a backup").
    disposal_journal.record(record, link, event.actor_ref)
    return record


DISPOSE = Operation(
    "dispose",
    body=do_dispose,
    input=bodies.DisposalSerializer,
    output="grounding.api.serializers.DisposalResultSerializer",
    roles=(Role.ACCESS_STEWARD,),
    # open_link's but the profile's status and the withdrawal: a withdrawn link may be
    # disposed, a disposed one is refused (link_disposed) after the revision check.
    refusals=(
        "not_found",
        "dimension_inactive",
        "role_required",
        "revision_mismatch",
        "link_disposed",
        "validation_error",
        "disposal_journal_unavailable",
    ),
    success=(201,),
    headers=("ETag",),
    conditional=True,
    summary="Record a disposal receipt and purge local copied payloads",
    context=refusal_context,
)
dispose = DISPOSE.entry


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


def _passages_to_purge(link: GroundingLink) -> set:
    """Passages of the link's Dimension whose copied text goes with this disposal: the
    ones this link binds (now or in an earlier revision) and every occurrence of their
    texts in that Dimension, except where an undisposed link of the Dimension binds
    the passage, or binds another occurrence of its text. Other Dimensions' passages
    are never chosen, nor are their links asked (a Dimension is a boundary)."""
    evidence = Passage.objects.filter(dimension_id=link.dimension_id)
    mine = set(
        PassageBinding.objects.filter(
            link=link, passage__isnull=False, passage__dimension_id=link.dimension_id
        ).values_list("passage_id", flat=True)
    )
    digests = set(
        evidence.filter(pk__in=mine)
        .exclude(content_sha256="")
        .values_list("content_sha256", flat=True)
    )
    live = (
        PassageBinding.objects.filter(
            link__dimension_id=link.dimension_id, passage__dimension_id=link.dimension_id
        )
        .exclude(link=link)
        .exclude(link__record_state=RecordState.DISPOSED)
    )
    live_passages = set(
        live.filter(Q(passage_id__in=mine) | Q(passage__content_sha256__in=digests)).values_list(
            "passage_id", flat=True
        )
    )
    kept_digests = set(
        evidence.filter(pk__in=live_passages).values_list("content_sha256", flat=True)
    )
    occurrences = set(
        evidence.filter(content_sha256__in=digests - kept_digests).values_list(
            "passage_id", flat=True
        )
    )
    return (mine | occurrences) - live_passages
