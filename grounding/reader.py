"""How the one reader (`policies.reader`) shows a grounding link.

The link document (`grounding.representation`) is built here and cut down to what
the reader's disclosure decisions cover; nothing else in the project turns a link
into something a person or client sees. A disposed link reads as its tombstone in
every view of it: current, any revision, any projection.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from common.kernel.instants import rfc3339
from common.kernel.refusals import Refusal
from evidence.choices import AccessLabel
from grounding.choices import RecordState
from grounding.models import Disposal, GroundingLink
from grounding.representation import LinkRecords, link_document
from grounding.selectors import current_records, link_at_revision
from policies.choices import DisclosableField as F
from policies.disclosure import Coverage
from policies.reader import Reader, Recipient, register_kind

# Where each disclosable field lives in the document ("*" walks a list). The anchor
# result (offsets and digests of the matched text) says where the quote is in the
# passage and what the text there hashes to: it is part of `anchor.selector` and
# of `passage.excerpt`, withheld when either is (API.md "Tenancy").
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
    F.PASSAGE_EXCERPT: (
        ("passage", "excerpt"),
        ("passage", "representation_check"),
        ("anchor", "anchor_result"),
    ),
    F.ANCHOR_SELECTOR: (
        ("anchor", "source_selector"),
        ("anchor", "context_ref"),
        ("anchor", "anchor_result"),
    ),
    F.ASSESSMENTS_VERDICT: (
        ("assessments", "*", "verdict"),
        ("displayed_verdict",),
    ),
    F.ASSESSMENTS_REVIEWER: (
        ("assessments", "*", "reviewer_ref"),
        ("assessments", "*", "reviewer_kind"),
    ),
}
ALL_WITHHELD = sorted(FIELD_PATHS)


def tombstone(link: GroundingLink) -> dict[str, Any]:
    """All that remains readable of a disposed link (docs/api.md "The link as read")."""
    disposal = Disposal.objects.filter(link_id=link.pk).first()
    return {
        "grounding_id": str(link.grounding_id),
        "revision": link.revision,
        "record_state": RecordState.DISPOSED.value,
        "dimension": link.dimension.name,
        "receipt_ref": disposal.receipt_ref if disposal else link.disposition_receipt_ref,
        "policy_ref": disposal.policy_ref if disposal else "",
        "observed_at": rfc3339(link.observed_at),
        "disposed_at": rfc3339(disposal.recorded_at) if disposal else None,
    }


def source_restricted(link: GroundingLink) -> bool:
    passage = link.current_passage.passage if link.current_passage_id else None
    return bool(passage and passage.access_label == AccessLabel.RESTRICTED)


def withheld_names(link: GroundingLink, coverage: Coverage) -> list[str]:
    visible = coverage.visible(source_restricted=source_restricted(link))
    return sorted(set(FIELD_PATHS) - visible)


def disclose(link: GroundingLink, records: LinkRecords, coverage: Coverage) -> dict[str, Any]:
    """The document `coverage` lets a reader see, or `disclosure_not_decided`."""
    if not coverage.decided:
        raise Refusal(
            "disclosure_not_decided",
            "no disclosure decision covers this recipient and purpose for the link.",
        )
    document = link_document(link, records)
    withheld = withheld_names(link, coverage)
    for name in withheld:
        for path in FIELD_PATHS[name]:
            _remove(document, path)
    document["withheld"] = withheld
    return document


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


class LinkKind:
    """The reader's rules for grounding links."""

    def read(
        self,
        reader: Reader,
        link: GroundingLink,
        *,
        records: LinkRecords | None = None,
        revision: int | None = None,
        recipient: Recipient | None = None,
    ) -> dict[str, Any]:
        """The link (at `revision`, for `recipient`; by default now, for the user's
        staff roles) as the reader may see it."""
        reader.require_member(link.dimension_id, "grounding link")
        if link.record_state == RecordState.DISPOSED:
            return tombstone(link)
        if revision is not None:
            link, records = link_at_revision(link, revision)
        coverage = reader.coverage(
            link.dimension_id, link.grounding_id, None if recipient is None else [recipient]
        )
        return disclose(link, records if records is not None else current_records(link), coverage)

    def scope(
        self,
        reader: Reader,
        queryset: QuerySet,
        *,
        path: str = "",
        fields: tuple[str, ...] = (),
        tombstones: bool = True,
    ) -> QuerySet:
        """Links (or rows reached from a link through `path`) a decision lets the reader
        see; with `fields`, only where those fields are visible; without
        `tombstones`, no disposed link's rows."""
        queryset = queryset.filter(
            reader.covered_q(
                dimension_field=f"{path}dimension_id",
                id_field=f"{path}grounding_id",
                fields=fields,
            )
        )
        if not tombstones:
            queryset = queryset.exclude(**{f"{path}record_state": RecordState.DISPOSED})
        return queryset

    def withheld(self, reader: Reader, link: GroundingLink) -> list[str] | None:
        if not reader.roles(link.dimension_id):
            return None
        if link.record_state == RecordState.DISPOSED:
            return list(ALL_WITHHELD)
        coverage = reader.coverage(link.dimension_id, link.grounding_id)
        if not coverage.decided:
            return None
        return withheld_names(link, coverage)


def register() -> None:
    register_kind(GroundingLink, LinkKind())


def loss_report_for(withheld: list[str]) -> list[dict[str, str]]:
    return [
        {
            "distinction": name,
            "disposition": "disclose-loss",
            "detail": "withheld: not covered by the disclosure decision",
        }
        for name in withheld
    ]
