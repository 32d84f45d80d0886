"""Record keys: what disposal destroys.

A link's rows are committed with the link's key, a passage's with the passage's
(`transparency.tables`). Disposal purges the text and destroys these keys in the
same transaction: the key's bytes are set to NULL, and the row says when and by
which disposal (`destroyed_by`: the Disposal record's id, which the disposal's own
leaf commits to). The leaves, the tree and every proof stay as they were; the
commitments made with a destroyed key can no longer be recomputed, so a guessed text
cannot be confirmed against them. The rows the disposal itself writes (the purged
rows, the tombstone) get fresh keys, so the tombstone stays verifiable.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.utils import timezone

from transparency import tables
from transparency.models import RecordKey


def destroy(*, links: Iterable = (), passages: Iterable = (), by: uuid.UUID) -> int:
    """Destroy the live keys of these links and passages (disposal `by`); how many."""
    subjects = [tables.subject(tables.LINK, g) for g in links]
    subjects += [tables.subject(tables.PASSAGE, p) for p in passages]
    if not subjects:
        return 0
    return RecordKey.objects.filter(subject__in=subjects, destroyed_at__isnull=True).update(
        key=None, destroyed_at=timezone.now(), destroyed_by=by
    )
