"""Review deadlines: links whose `review_due` has passed go back to review.

One `review_due` notification per Dimension and sweep, with a generated change_ref
(`urn:change:review-due:<dimension>:<instant>`), fanned out like any other change.
Idempotent: a deadline sends a link to review once (a link already swept since its
review_due is left alone), so running the sweep again changes nothing until a
deadline passes or is moved past again. A sweep with nothing due records nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.db.models import QuerySet
from django.utils import timezone

from grounding.choices import ChangeKind
from grounding.models import ChangeNotification, GroundingLink
from grounding.services.changes import fan_out, finish
from grounding.services.fanout import affected_links
from policies.models import Dimension

REASON = "review_due passed"


def sweep_review_due(
    *,
    actor=None,
    now: datetime | None = None,
    dimensions: list[Dimension] | None = None,
    scope: QuerySet[GroundingLink] | None = None,
) -> list[ChangeNotification]:
    """Send every overdue link (of `dimensions`, default all active ones; within
    `scope` when given) to pending_review, in batches (one transaction each)."""
    cutoff = (now or timezone.now()).astimezone(UTC)
    stamp = cutoff.strftime("%Y%m%dT%H%M%S.%fZ")
    recorded = []
    for dimension in dimensions or list(Dimension.objects.filter(is_active=True)):
        # A sweep interrupted before its last batch is finished first.
        for unfinished in ChangeNotification.objects.select_related("dimension").filter(
            dimension=dimension, kind=ChangeKind.REVIEW_DUE, completed_at__isnull=True
        ):
            recorded.append(finish(actor, unfinished))
        values = {
            "change_ref": f"urn:change:review-due:{dimension.name}:{stamp}",
            "kind": ChangeKind.REVIEW_DUE,
            "subject_ref": cutoff.isoformat(),
            "observed_at": cutoff,
            "reason": REASON,
        }
        probe = ChangeNotification(dimension=dimension, **values)
        due = affected_links(probe)
        if scope is not None:
            due = due.filter(pk__in=scope.values("pk"))
        if not due.exists():
            continue
        recorded.append(fan_out(actor, dimension, values, scope=scope))
    return recorded
