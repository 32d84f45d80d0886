"""The fan-out of a change notification: which links a change affects, and one batch
of them sent back to review through the bulk writer.

A batch runs inside its caller's transaction. It locks its links (FOR UPDATE, in
key order, so batches and single-link operations queue rather than deadlock), then
re-reads which of them are still affected and not yet revised by this notification:
a link revised, withdrawn or rebound meanwhile is judged on what was committed, and
the (notification, link) constraint makes a second revision of a link by the same
notification impossible even under retries and races.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Q, QuerySet

from common.kernel import compat
from common.kernel.bulk import (
    insert_rows,
    update_with_history,
)
from common.kernel.copies import copy_with_history
from common.kernel.rows import new_instance, stored_instance
from evidence.choices import AccessLabel
from grounding.choices import ChangeKind, RebindRequirement, RecheckState, RecordState
from grounding.display import derive_display
from grounding.models import (
    Assessment,
    ChangeNotification,
    ChangeNotificationLink,
    GroundingLink,
    StatementBinding,
)
from policies import audit

# The audit action of the links a change notification revises: NOTIFY_CHANGE's
# (grounding.services.changes declares the operation with it; that module imports
# this one).
ACTION = "notify_change"

# Links per batch: each batch is one short transaction (when the caller commits
# between batches) holding the locks of at most this many links.
BATCH_SIZE = 1000

# Link columns that cite a policy (the profile's policy refs), and assessment ones.
LINK_POLICY_FIELDS = (
    "disclosure_policy_ref",
    "disposition_policy_ref",
    "safety_policy_ref",
    "mapping_profile_ref",
    "redaction_profile",
    "rights_ref",
)
ASSESSMENT_POLICY_FIELDS = ("authority_ref", "selection_basis_ref")

LINK_FIELDS = (
    "revision",
    "basis_revision",
    "change_ref",
    "recheck_state",
    "predecessor_ref",
    "revision_reason",
    "support_verdict_ref",
    "display_state",
    "displayed_verdict",
    "current_statement",
)
_FINAL = (RecordState.WITHDRAWN, RecordState.DISPOSED)
# The columns a change of these kinds matches its subject against (any of them equal
# to it): one definition, for the search (in SQL) and for a batch's judgement of the
# links it read by key (on the values read).
SUBJECT_PATHS = {
    ChangeKind.SOURCE: (
        "current_passage__passage__canonical_url",
        "current_passage__passage_ref",
        "current_passage__source_revision_binding__source_ref",
    ),
    ChangeKind.ANSWER: ("current_statement__answer_revision_ref",),
}
# What a batch reads of each link (its key, what it judges, what it sets), of its
# current statement (the database copies it to rebind), and of its passage.
_LINK_READ = ("grounding_id", "record_state", "resolution_state", *LINK_FIELDS)
_LINK_ATTNAMES = tuple(GroundingLink._meta.get_field(name).attname for name in _LINK_READ)
_STATEMENT = ("current_statement__binding_id", "current_statement__rebind_requirement")
_STATEMENT_ATTNAMES = ("binding_id", "rebind_requirement")
_ACCESS_LABEL = "current_passage__passage__access_label"


def affected_links(notification: ChangeNotification) -> QuerySet[GroundingLink]:
    """Links of the notification's Dimension its change affects, withdrawn and disposed
    ones left out, without those it has already revised."""
    subject = notification.subject_ref
    kind = notification.kind
    if kind in SUBJECT_PATHS:
        match = Q()
        for path in SUBJECT_PATHS[kind]:
            match |= Q(**{path: subject})
    elif kind == ChangeKind.POLICY:
        match = Q(**{LINK_POLICY_FIELDS[0]: subject})
        for name in LINK_POLICY_FIELDS[1:]:
            match |= Q(**{name: subject})
        cited = Q(**{ASSESSMENT_POLICY_FIELDS[0]: subject})
        for name in ASSESSMENT_POLICY_FIELDS[1:]:
            cited |= Q(**{name: subject})
        match |= Exists(Assessment.objects.filter(cited, link=OuterRef("pk")))
    elif kind == ChangeKind.ASSESSMENT:
        match = Exists(Assessment.objects.filter(link=OuterRef("pk"), assessment_ref=subject))
    elif kind == ChangeKind.REVIEW_DUE:
        # Each deadline sends a link to review once: a sweep after it already did.
        swept = ChangeNotificationLink.objects.filter(
            link=OuterRef("pk"),
            notification__kind=ChangeKind.REVIEW_DUE,
            notification__observed_at__gte=OuterRef("review_due"),
        )
        match = Q(review_due__lte=notification.observed_at) & ~Exists(swept)
    else:  # pragma: no cover - the choices are closed
        raise ValueError(kind)
    links = GroundingLink.objects.filter(dimension_id=notification.dimension_id)
    return _still_open(notification, links.filter(match))


def _still_open(notification: ChangeNotification, links: QuerySet[GroundingLink]):
    """`links` without the withdrawn and disposed ones and those the notification has
    already revised."""
    done = ChangeNotificationLink.objects.filter(
        notification_id=notification.pk, link=OuterRef("pk")
    )
    return links.exclude(record_state__in=_FINAL).exclude(Exists(done))


@dataclass
class Batch:
    links: list[tuple[uuid.UUID, int]]
    # The last link key this batch looked at (the next batch starts after it), or
    # None when there was nothing left to look at.
    cursor: uuid.UUID | None
    # How many candidate keys it looked at: fewer than the batch size means the last.
    looked: int = 0

    def is_final(self, batch_size: int) -> bool:
        return self.cursor is None or self.looked < batch_size


def candidate_keys(
    notification: ChangeNotification,
    *,
    after: uuid.UUID | None = None,
    scope: QuerySet[GroundingLink] | None = None,
    limit: int | None = None,
) -> list[uuid.UUID]:
    """Keys of the links the notification still affects (after `after`, within
    `scope`), in key order; at most `limit` of them."""
    candidates = affected_links(notification)
    if scope is not None:
        candidates = candidates.filter(pk__in=scope.values("pk"))
    if after is not None:
        candidates = candidates.filter(pk__gt=after)
    keys = candidates.order_by("pk").values_list("pk", flat=True)
    return list(keys[:limit] if limit is not None else keys)


def apply_batch(
    notification: ChangeNotification,
    *,
    actor,
    after: uuid.UUID | None = None,
    batch_size: int = BATCH_SIZE,
    scope: QuerySet[GroundingLink] | None = None,
    keys: list[uuid.UUID] | None = None,
) -> Batch:
    """Send the next `batch_size` affected links (keys after `after`) to review.

    Given `keys` (the next ones of an earlier `candidate_keys`, in order), it takes
    those instead of searching again: searching the affected links for each batch
    made a fan-out quadratic in its size. Such a batch is never the final one; a batch
    that searches decides the end, so a link affected meanwhile is not left out.
    """
    searched = keys is None
    if searched:
        keys = candidate_keys(notification, after=after, scope=scope, limit=batch_size)
    if not keys:
        return Batch([], None)
    # Lock first, then judge on what is committed once the locks are held.
    list(
        GroundingLink.objects.select_for_update(of=("self",))
        .filter(pk__in=keys)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    links, restricted = _still_affected(notification, keys)
    _write(notification, links, restricted, actor=actor)
    looked = len(keys) if searched else batch_size
    return Batch([(link.grounding_id, link.revision) for link in links], keys[-1], looked)


def _still_affected(notification: ChangeNotification, keys: list[uuid.UUID]):
    """The links of `keys` the notification still affects, in key order, holding what
    the batch reads or sets (history rows are copied by the database), each with its
    current statement; and the keys of those whose passage is restricted.

    One query of plain values, the instances then built from them as `from_db` would
    (the fields not read are deferred): select_related's instance machinery was a
    seventh of a fan-out's time. For a change matched on its subject's columns the
    links are read by key and the subject tested on the values read: PostgreSQL
    estimates a just-registered subject at one row, and a query filtering on it walks
    every link the subject affects, for every batch (docs/performance.md)."""
    paths = SUBJECT_PATHS.get(notification.kind)
    if paths is None:
        found, tested = affected_links(notification).filter(pk__in=keys), ()
    else:
        found = _still_open(notification, GroundingLink.objects.filter(pk__in=keys))
        tested = ("dimension_id", *paths)
    found = found.order_by("pk").values_list(*_LINK_READ, *_STATEMENT, _ACCESS_LABEL, *tested)
    links: list[GroundingLink] = []
    restricted: set[uuid.UUID] = set()
    split, end = len(_LINK_READ), len(_LINK_READ) + len(_STATEMENT)
    subject = (notification.dimension_id, notification.subject_ref)
    for row in found:
        if tested and (row[end + 1] != subject[0] or subject[1] not in row[end + 2 :]):
            continue
        link = stored_instance(GroundingLink, _LINK_ATTNAMES, row[:split], found.db)
        statement = row[split:end]
        if statement[0] is not None:
            compat.related_cache(link)["current_statement"] = stored_instance(
                StatementBinding, _STATEMENT_ATTNAMES, statement, found.db
            )
        if row[end] == AccessLabel.RESTRICTED:
            restricted.add(link.grounding_id)
        links.append(link)
    return links, restricted


def revision_reason(notification: ChangeNotification) -> str:
    return f"{notification.kind} change {notification.change_ref}: {notification.reason}"


def _write(
    notification: ChangeNotification,
    links: list[GroundingLink],
    restricted: set[uuid.UUID],
    *,
    actor,
) -> None:
    if not links:
        return
    reason = revision_reason(notification)
    rebound: list[GroundingLink] = []
    previous = {}
    for link in links:
        old_revision = link.revision
        previous[link.grounding_id] = old_revision
        new_revision = old_revision + 1
        if notification.kind == ChangeKind.ANSWER and _needs_rebind(link):
            rebound.append(link)
        link.revision = new_revision
        # Earlier assessments judged the unchanged inputs: only one of this
        # revision (or a later one) can make the link positive again.
        link.basis_revision = new_revision
        link.change_ref = notification.change_ref
        link.recheck_state = RecheckState.PENDING_REVIEW
        link.predecessor_ref = f"urn:grounding:{link.grounding_id}@{old_revision}"
        link.revision_reason = reason
        link.support_verdict_ref = ""
        # pending_review decides before any assessment is looked at.
        display = derive_display(
            record_state=link.record_state,
            recheck_state=link.recheck_state,
            resolution_state=link.resolution_state,
            source_restricted=link.grounding_id in restricted,
            assessments=(),
        )
        link.display_state = display.display_state
        link.displayed_verdict = display.displayed_verdict
    _rebind(rebound, actor=actor, reason=reason)
    update_with_history(GroundingLink, links, LINK_FIELDS, user=actor, change_reason=reason)
    insert_rows(
        ChangeNotificationLink,
        [
            new_instance(
                ChangeNotificationLink,
                {"notification": notification, "link": link, "revision": link.revision},
            )
            for link in links
        ],
    )
    audit.record_many(
        actor=actor,
        action=ACTION,
        entries=[
            {
                "grounding_id": link.grounding_id,
                "dimension_ref": notification.dimension.name,
                "expected_revision": previous[link.grounding_id],
                "resulting_revision": link.revision,
                "references": {"change_ref": notification.change_ref, "kind": notification.kind},
            }
            for link in links
        ],
    )


def _needs_rebind(link: GroundingLink) -> bool:
    statement = compat.related_cache(link).get("current_statement")
    return statement is not None and statement.rebind_requirement != (
        RebindRequirement.REVIEW_REQUIRED
    )


def _rebind(links: list[GroundingLink], *, actor, reason: str) -> None:
    """Each link's new statement binding asking for review, as revise would make: its
    current one copied by the database, bound in the link's new revision and naming
    the one it replaces (with a history row each)."""
    if not links:
        return
    old = [link.current_statement_id for link in links]
    new = copy_with_history(
        StatementBinding,
        old,
        {
            "bound_in_revision": [link.revision for link in links],
            "predecessor_id": old,
            "rebind_requirement": RebindRequirement.REVIEW_REQUIRED,
        },
        user=actor,
        change_reason=reason,
    )
    for link, key in zip(links, new, strict=True):
        compat.related_cache(link).pop("current_statement", None)
        link.current_statement_id = key
