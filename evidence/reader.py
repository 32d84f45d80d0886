"""How the one reader (`policies.reader`) shows an evidence passage.

Passages answer their Dimension's curators and stewards only; everyone else sees
passage fields inside a link, through that link's disclosure decision. Even for
them the passage's text, title and locators are disclosed fields: shown under the
Dimension-wide decisions their roles read with (restricted sources only where a
decision names restricted sources), so revoking one withholds them here too.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from common.kernel.instants import rfc3339
from common.kernel.refusals import Refusal
from evidence.choices import AccessLabel
from evidence.models import Document, Passage
from policies.choices import DisclosableField as F
from policies.choices import Role
from policies.reader import Reader, register_kind

# Who reads passages directly (docs/api.md "Evidence reads").
PASSAGE_READERS = (Role.CURATOR, Role.STEWARD, Role.ACCESS_STEWARD)

# Disclosable field -> the passage document's members it covers.
PASSAGE_FIELDS: dict[str, tuple[str, ...]] = {
    F.PASSAGE_EXCERPT: ("text", "provider_fields"),
    F.PASSAGE_TITLE: ("title",),
    F.PASSAGE_LOCATOR: ("locator", "observed_url", "canonical_url"),
}


def passage_document(passage: Passage) -> dict[str, Any]:
    """The passage as stored (literal text, byte for byte), before disclosure."""
    envelope = passage.retrieval_observation
    return {
        "passage_id": str(passage.passage_id),
        "passage_ref": passage.passage_ref,
        "dimension": passage.dimension.name,
        "kind": passage.kind,
        "source_field": passage.source_field,
        "locator": passage.locator,
        "observed_url": passage.observed_url,
        "canonical_url": passage.canonical_url,
        "title": passage.title,
        "text": passage.content.text if passage.content_id else None,
        "content_sha256": passage.content_sha256,
        "media_type": passage.media_type,
        "language": passage.language,
        "access_label": passage.access_label,
        "execution_id": passage.execution_id,
        "observation_id": passage.observation_id,
        "provider": passage.provider,
        "endpoint_id": passage.endpoint_id,
        "provider_attempt_id": passage.provider_attempt_id,
        "provider_result_index": passage.provider_result_index,
        "provider_rank": passage.provider_rank,
        "provider_score": None
        if passage.provider_score_value is None
        else {
            "value": passage.provider_score_value,
            "semantics": passage.provider_score_semantics,
        },
        "published_at": None
        if passage.published_at_raw is None
        else {"raw": passage.published_at_raw, "normalized": passage.published_at_normalized},
        "provider_fields": passage.provider_fields,
        "duplicate_of": str(passage.duplicate_of_id) if passage.duplicate_of_id else None,
        "document_id": str(passage.document_id) if passage.document_id else None,
        "page": passage.page_number,
        "retrieval_observation": None
        if envelope is None
        else {
            "import_id": str(envelope.observation_id),
            "execution_id": envelope.execution_id,
            "cache_status": envelope.cache_status,
            "policy_actions": [
                action
                for action in envelope.policy_actions
                if isinstance(action, dict)
                and action.get("observation_id") == passage.observation_id
            ],
        },
        "created_at": rfc3339(passage.created_at),
    }


class PassageKind:
    """The reader's rules for evidence passages (and rows of their Dimension)."""

    def read(self, reader: Reader, passage: Passage, **options: Any) -> dict[str, Any]:
        reader.require_role(passage.dimension_id, *PASSAGE_READERS, what="passage")
        withheld = self._withheld(reader, passage)
        document = passage_document(passage)
        for name in withheld:
            for key in PASSAGE_FIELDS[name]:
                document.pop(key, None)
        document["withheld"] = withheld
        return document

    def scope(
        self, reader: Reader, queryset: QuerySet, *, path: str = "", fields: tuple = ()
    ) -> QuerySet:
        """Rows of the Dimensions whose evidence the reader may read (passages, and
        through `path` anything that belongs to a Dimension: envelopes, sources'
        passages); with `fields`, only where the Dimension-wide decisions show them,
        a restricted source's rows only where a decision names restricted sources
        too (a filter must not select on a value it would not show)."""
        wanted = set(fields)
        shown, shown_restricted = [], []
        for dimension in reader.dimensions(*PASSAGE_READERS):
            coverage = reader.coverage(dimension.pk, None, self._recipients(reader, dimension.pk))
            if not coverage.decided:
                continue
            if wanted <= coverage.fields:
                shown.append(dimension.pk)
            if wanted <= coverage.visible(source_restricted=True):
                shown_restricted.append(dimension.pk)
        dimension_field = f"{path}dimension_id__in"
        if set(shown) <= set(shown_restricted):
            return queryset.filter(**{dimension_field: shown})
        label = _label_field(queryset.model, path)
        if label is None:
            # Rows with no label of their own: only where restricted ones would show.
            return queryset.filter(**{dimension_field: shown_restricted})
        return queryset.filter(**{dimension_field: shown}).exclude(
            Q(**{label: AccessLabel.RESTRICTED}) & ~Q(**{dimension_field: shown_restricted})
        )

    def withheld(self, reader: Reader, passage: Passage) -> list[str] | None:
        try:
            reader.require_role(passage.dimension_id, *PASSAGE_READERS, what="passage")
            return self._withheld(reader, passage)
        except Refusal:
            return None

    def _recipients(self, reader: Reader, dimension_id: int):
        return reader.staff_recipients(dimension_id, PASSAGE_READERS)

    def _withheld(self, reader: Reader, passage: Passage) -> list[str]:
        coverage = reader.coverage(
            passage.dimension_id, None, self._recipients(reader, passage.dimension_id)
        )
        if not coverage.decided:
            raise Refusal(
                "disclosure_not_decided",
                "no disclosure decision of the Dimension covers reading its evidence.",
            )
        restricted = passage.access_label == AccessLabel.RESTRICTED
        visible = coverage.visible(source_restricted=restricted)
        return sorted(set(PASSAGE_FIELDS) - visible)


class DocumentKind:
    """A PDF document (its import report) as its Dimension's curators and stewards
    read it; to anyone else it does not exist (404). Its ref and title are its pages'
    locator and title: withheld where theirs are (the pages share one source label)."""

    def read(self, reader: Reader, document: Document, **options: Any) -> dict[str, Any]:
        reader.require_member(document.dimension_id, "document")
        if not reader.roles(document.dimension_id) & {str(r) for r in PASSAGE_READERS}:
            raise Refusal("not_found", "no document of yours has this id.")
        page = document.pages.only("dimension_id", "access_label").first()
        withheld = PassageKind()._withheld(reader, page) if page is not None else []
        report = dict(document.report)
        if F.PASSAGE_LOCATOR in withheld:
            report.pop("source_ref", None)
        if F.PASSAGE_TITLE in withheld:
            report.pop("title", None)
        report["withheld"] = [f for f in withheld if f in (F.PASSAGE_LOCATOR, F.PASSAGE_TITLE)]
        return report

    def scope(self, reader: Reader, queryset: QuerySet, **options: Any) -> QuerySet:
        return queryset.filter(dimension_id__in=[d.pk for d in reader.dimensions(*PASSAGE_READERS)])

    def withheld(self, reader: Reader, document: Document) -> list[str] | None:
        try:
            return self.read(reader, document)["withheld"]
        except Refusal:
            return None


def _label_field(model, path: str) -> str | None:
    """The access label of the rows scoped (a passage's, a source's), if they have one."""
    if path:
        return None
    names = {field.name for field in model._meta.get_fields()}
    return "access_label" if "access_label" in names else None


def register() -> None:
    register_kind(Passage, PassageKind())
    register_kind(Document, DocumentKind())
