"""The one disclosure projection: every path to a link's content goes through here
(REST reads and lists, revisions/{n}, projections and exports, admin, pages)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from evidence.choices import AccessLabel
from grounding.models import GroundingLink
from grounding.representation import LinkRecords, link_document
from policies.choices import DisclosableField as F
from policies.disclosure import PURPOSE_BY_ROLE, Coverage, coverage_for, valid_decisions
from policies.models import Dimension, DisclosureDecision
from policies.refusals import Refusal
from policies.services import roles_of

# Where each disclosable field lives in the document ("*" walks a list).
FIELD_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    F.STATEMENT: (("statement",),),
    F.SUPPORT: (("support",),),
    F.PASSAGE_LOCATOR: (
        ("passage", "locator"),
        ("passage", "canonical_url"),
        ("passage", "source_revision_binding"),
        ("passage", "retrieval_observation_ref"),
    ),
    F.PASSAGE_TITLE: (("passage", "title"),),
    F.PASSAGE_EXCERPT: (("passage", "excerpt"), ("passage", "representation_check")),
    F.ANCHOR_SELECTOR: (("anchor", "source_selector"), ("anchor", "context_ref")),
    F.ASSESSMENTS_VERDICT: (
        ("assessments", "*", "verdict"),
        ("displayed_verdict",),
    ),
    F.ASSESSMENTS_REVIEWER: (
        ("assessments", "*", "reviewer_ref"),
        ("assessments", "*", "reviewer_kind"),
    ),
}


@dataclass(frozen=True)
class Reader:
    """Who reads, as recipient scopes, and for which purpose."""

    recipient_scopes: tuple[str, ...]
    purpose: str


class DecisionCache:
    """Decisions fetched once per (Dimension, recipients, purpose) for a request, and
    each distinct coverage derived once: the links of a page mostly share the same
    decisions, so they share one `Coverage` instead of re-deriving it per link."""

    def __init__(self) -> None:
        self._cache: dict[tuple, list[DisclosureDecision]] = {}
        # Per decisions list, the ids each link-specific decision lists (None for a
        # Dimension-wide one), as strings so that matching a link is one set lookup.
        self._listed: dict[tuple, tuple[frozenset[str] | None, ...]] = {}
        self._coverages: dict[tuple, Coverage] = {}

    def decisions(self, dimension: Dimension, reader: Reader) -> list[DisclosureDecision]:
        key = (dimension.pk, reader.recipient_scopes, reader.purpose)
        if key not in self._cache:
            self._cache[key] = valid_decisions(
                dimension=dimension,
                recipient_scopes=reader.recipient_scopes,
                purpose=reader.purpose,
            )
        return self._cache[key]

    def coverage(self, link: GroundingLink, readers: Iterable[Reader]) -> Coverage:
        """What the readers together may see of the link."""
        grounding_id = str(link.grounding_id)
        chosen = []
        key: list[Any] = [link.dimension_id]
        for reader in readers:
            decisions = self.decisions(link.dimension, reader)
            listed = self._listed_ids(link.dimension, reader, decisions)
            # The decisions that cover this link: a Coverage depends only on which
            # ones they are, so links covered by the same ones share it.
            picked = tuple(i for i, ids in enumerate(listed) if ids is None or grounding_id in ids)
            chosen.append([decisions[i] for i in picked])
            key.append((reader, picked))
        memo = tuple(key)
        if memo not in self._coverages:
            self._coverages[memo] = _merge(
                coverage_for(decisions, link.grounding_id) for decisions in chosen
            )
        return self._coverages[memo]

    def _listed_ids(
        self, dimension: Dimension, reader: Reader, decisions: list[DisclosureDecision]
    ) -> tuple[frozenset[str] | None, ...]:
        key = (dimension.pk, reader.recipient_scopes, reader.purpose)
        if key not in self._listed:
            self._listed[key] = tuple(
                None
                if decision.grounding_ids is None
                else frozenset(str(g) for g in decision.grounding_ids)
                for decision in decisions
            )
        return self._listed[key]


def readers_for_user(user, dimension: Dimension) -> list[Reader]:
    """A staff member reads in each internal role they hold, under its purpose."""
    return [
        Reader((f"role:{role}",), PURPOSE_BY_ROLE[role])
        for role in sorted(roles_of(user, dimension))
        if role in PURPOSE_BY_ROLE
    ]


def coverage(
    link: GroundingLink, readers: Iterable[Reader], cache: DecisionCache | None = None
) -> Coverage:
    return (cache or DecisionCache()).coverage(link, readers)


def _merge(parts: Iterable[Coverage]) -> Coverage:
    fields: set[str] = set()
    restricted: set[str] = set()
    refs: list[str] = []
    for part in parts:
        fields |= part.fields
        restricted |= part.restricted_fields
        refs += part.decision_refs
    return Coverage(frozenset(fields), frozenset(restricted), tuple(refs))


def disclose(
    link: GroundingLink, records: LinkRecords, coverage_: Coverage
) -> tuple[dict[str, Any], Coverage]:
    """The document a reader may see, or `disclosure_not_decided`."""
    if not coverage_.decided:
        raise Refusal(
            "disclosure_not_decided",
            "no disclosure decision covers this recipient and purpose for the link.",
        )
    passage = link.current_passage.passage
    restricted = bool(passage and passage.access_label == AccessLabel.RESTRICTED)
    visible = coverage_.visible(source_restricted=restricted)
    document = link_document(link, records)
    withheld = sorted(set(FIELD_PATHS) - visible)
    for name in withheld:
        for path in FIELD_PATHS[name]:
            _remove(document, path)
    document["withheld"] = withheld
    return document, coverage_


def _remove(node: Any, path: tuple[str, ...]) -> None:
    head, rest = path[0], path[1:]
    if head == "*":
        for item in node if isinstance(node, list) else []:
            _remove(item, rest)
        return
    if not isinstance(node, dict) or head not in node:
        return
    if rest:
        _remove(node[head], rest)
    else:
        del node[head]


def canonical_sha256(document: Any) -> str:
    data = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def loss_report_for(withheld: list[str]) -> list[dict[str, str]]:
    return [
        {
            "distinction": name,
            "disposition": "disclose-loss",
            "detail": "withheld: not covered by the disclosure decision",
        }
        for name in withheld
    ]
