"""Disclosure decisions evaluated over field names. Default deny.

A read is a projection for a recipient and a purpose. The fields it may show are
the union of the fields of every decision that covers the recipient, the purpose
and the link, and is valid now and not revoked. Source restrictions win: a
restricted passage keeps its excerpt, title, locator and selector withheld unless a
covering decision names restricted sources explicitly.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from common.kernel import reads
from policies.choices import DisclosableField, InternalPurpose, Role
from policies.models import Dimension, DisclosureDecision

RESTRICTED_SOURCE_FIELDS = frozenset(
    {
        DisclosableField.PASSAGE_EXCERPT,
        DisclosableField.PASSAGE_TITLE,
        DisclosableField.PASSAGE_LOCATOR,
        DisclosableField.ANCHOR_SELECTOR,
    }
)
ALL_FIELDS = frozenset(DisclosableField.values)

# The purpose under which each internal role reads, and so the decisions a new
# Dimension records for its staff.
PURPOSE_BY_ROLE = {
    Role.CURATOR: InternalPurpose.CURATION,
    Role.REVIEWER: InternalPurpose.REVIEW,
    Role.STEWARD: InternalPurpose.STEWARDSHIP,
    Role.ACCESS_STEWARD: InternalPurpose.STEWARDSHIP,
}


@dataclass(frozen=True)
class Coverage:
    fields: frozenset[str]
    restricted_fields: frozenset[str]
    decision_refs: tuple[str, ...]

    @property
    def decided(self) -> bool:
        return bool(self.decision_refs)

    def visible(self, *, source_restricted: bool) -> frozenset[str]:
        if not source_restricted:
            return self.fields
        return (self.fields - RESTRICTED_SOURCE_FIELDS) | (
            self.fields & self.restricted_fields & RESTRICTED_SOURCE_FIELDS
        )


def valid_decisions(
    *,
    dimension: Dimension | int,
    recipient_scopes: Iterable[str],
    purpose: str,
    at: datetime | None = None,
) -> list[DisclosureDecision]:
    """Decisions of the Dimension for these recipients and purpose, valid at `at`.

    Every read of a link asks this, so it is one plain statement instead of a
    queryset: the ORM's compilation of the filter was four fifths of its cost
    (docs/performance.md). `test_disclosure.py` holds it equal to
    the queryset it replaces.
    """
    now = at or timezone.now()
    scopes = list(dict.fromkeys(recipient_scopes))
    if not scopes:
        return []
    found = reads.read(
        _valid_sql(len(scopes)),
        [getattr(dimension, "pk", dimension), *scopes, purpose, now, now],
        (DisclosureDecision,),
    )
    return [decision for (decision,) in found]


@functools.lru_cache(maxsize=64)
def _valid_sql(scopes: int) -> str:
    return (
        f"SELECT {reads.columns(DisclosureDecision, 'd')} "
        f"FROM {DisclosureDecision._meta.db_table} d "
        f"WHERE dimension_id = %s AND recipient_scope IN ({', '.join(['%s'] * scopes)}) "
        "AND purpose = %s AND revoked_at IS NULL "
        "AND (valid_from IS NULL OR valid_from <= %s) "
        "AND (valid_until IS NULL OR valid_until > %s) ORDER BY decision_ref"
    )


def coverage_for(decisions: Iterable[DisclosureDecision], grounding_id: uuid.UUID) -> Coverage:
    """What the decisions let a reader see of one link."""
    fields: set[str] = set()
    restricted: set[str] = set()
    refs: list[str] = []
    for decision in decisions:
        if decision.grounding_ids is not None and str(grounding_id) not in {
            str(g) for g in decision.grounding_ids
        }:
            continue
        covered = set(decision.fields) & ALL_FIELDS
        fields |= covered
        if decision.includes_restricted_sources:
            restricted |= covered
        refs.append(decision.decision_ref)
    return Coverage(frozenset(fields), frozenset(restricted), tuple(refs))
