"""Reads of the log other apps use."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from transparency.models import Leaf


def leaf_indexes(audit_event_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, int]:
    """The leaf index of each applied audit event whose leaf is integrated into its
    log's tree; events not sequenced yet (or not logged) are absent."""
    ids = list(audit_event_ids)
    if not ids:
        return {}
    return dict(
        Leaf.objects.filter(audit_event__in=ids, index__isnull=False).values_list(
            "audit_event", "index"
        )
    )
