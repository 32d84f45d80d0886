"""What the grounding admins share: rights from Dimension roles, rows limited to the
links the reader may read, and the rows on which a link's value is disclosed to the
reader (`disclosed_links_q`), which every search field, list filter and date
drill-down of a link-bound admin is restricted by (`common.web.admin_base`).

A value of a disclosable group selects a link only where the reader's disclosure
decisions show that group for that link (`Reader.covered_q`, the API's rule), a
restricted source's passage fields only where a decision names restricted sources
too, and a disposed link only by what its tombstone still shows (its id, revision,
record state, Dimension and times): "a disposed link is found only by its id".
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from django.db.models import Q, QuerySet
from django.http import HttpRequest

from common.kernel.identifiers import parse_uuid
from common.web.admin_base import WITHHELD, DisclosedAdmin, holds, shown
from evidence.choices import AccessLabel
from grounding.choices import RecordState
from grounding.models import GroundingLink
from policies.choices import DisclosableField as F
from policies.disclosure import RESTRICTED_SOURCE_FIELDS
from policies.reader import Reader, reader_for

# Reveals a value a disposed link no longer shows (not part of its tombstone).
LIVE = "live"
LINK_REVEALS = frozenset({LIVE, *F.values})


def withheld_for(request: HttpRequest, link: GroundingLink) -> list[str] | None:
    """What the reader withholds of `link` (None: nothing of it is readable)."""
    return reader_for(request).withheld(link)


def disclosed_links_q(reader: Reader, reveal: str, path: str = "") -> Q:
    """Rows (links, or rows reaching their link through `path`) whose value of kind
    `reveal` (LIVE or a disclosable group) the reader may see."""
    live = ~Q(**{f"{path}record_state": RecordState.DISPOSED})
    if reveal == LIVE:
        return live
    dimension_field, id_field = f"{path}dimension_id", f"{path}grounding_id"
    covered = reader.covered_q(dimension_field=dimension_field, id_field=id_field, fields=[reveal])
    if reveal in RESTRICTED_SOURCE_FIELDS:
        # A restricted source keeps these withheld unless a covering decision names
        # restricted sources (policies.disclosure.Coverage.visible).
        restricted = Q(**{f"{path}current_passage__passage__access_label": AccessLabel.RESTRICTED})
        covered &= ~restricted | _restricted_covered_q(reader, reveal, dimension_field, id_field)
    return covered & live


def _restricted_covered_q(reader: Reader, group: str, dimension_field: str, id_field: str) -> Q:
    """Links some decision naming restricted sources and `group` lets the reader read."""
    parts = [Q(pk__in=[])]
    for dimension in reader.dimensions():
        for recipient in reader.staff_recipients(dimension.pk):
            for decision in reader.decisions(dimension.pk, recipient):
                if not (decision.includes_restricted_sources and group in decision.fields):
                    continue
                part = Q(**{dimension_field: dimension.pk})
                if decision.grounding_ids is not None:
                    part &= Q(**{f"{id_field}__in": _uuids(decision.grounding_ids)})
                parts.append(part)
    scope = parts[0]
    for part in parts[1:]:
        scope |= part
    return scope


def _uuids(values: Iterable[Any]) -> list[uuid.UUID]:
    return [found for found in map(parse_uuid, values) if found is not None]


class LinkScopedAdmin(DisclosedAdmin):
    """Rows of the links the reader may read (records of a disposed link are not
    shown: only the link's tombstone remains), view rights from Dimension roles, and
    columns, fields and history values of a withheld group shown as "withheld"."""

    link_path: ClassVar[str] = "link__"  # from this model to its GroundingLink
    known_reveals = LINK_REVEALS
    # Field -> the disclosable group(s) its value belongs to (withheld with any of them).
    masked: ClassVar[dict[str, str | tuple[str, ...]]] = {}

    def link_of(self, obj) -> GroundingLink:
        return obj if isinstance(obj, GroundingLink) else obj.link

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return reader_for(request).scope(
            super().get_queryset(request),
            kind=GroundingLink,
            path=self.link_path,
            tombstones=not self.link_path,
        )

    def disclosed_q(self, request: HttpRequest, reveal: str) -> Q:
        if reveal in LINK_REVEALS:
            return disclosed_links_q(reader_for(request), reveal, self.link_path)
        return super().disclosed_q(request, reveal)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return holds(request)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is None:
            return holds(request)
        return holds(request, dimension_id=self.link_of(obj).dimension_id)

    # -- values of withheld groups

    def is_withheld(self, request: HttpRequest, obj, name: str) -> bool:
        groups = self.masked.get(name)
        if groups is None:
            return False
        withheld = withheld_for(request, self.link_of(obj))
        groups = (groups,) if isinstance(groups, str) else groups
        return withheld is None or any(group in withheld for group in groups)

    def history_value(self, request: HttpRequest, obj, name: str, value: Any) -> str:
        if self.is_withheld(request, obj, name):
            return WITHHELD
        return shown(value)

    def _cell(self, request: HttpRequest, name: str) -> Callable[[Any], str]:
        # One closure per request and column: Django compares field entries by identity.
        cells = request.__dict__.setdefault("_grounding_cells", {})
        key = (type(self).__name__, name)
        if key not in cells:

            def cell(obj) -> str:
                if self.is_withheld(request, obj, name):
                    return WITHHELD
                return display(getattr(obj, name))

            cell.short_description = name.replace("_", " ")  # type: ignore[attr-defined]
            cell.__name__ = name
            cells[key] = cell
        return cells[key]

    def swap_masked(self, request: HttpRequest, names) -> list:
        return [self._cell(request, n) if n in self.masked else n for n in names]

    def get_list_display(self, request: HttpRequest):
        return self.swap_masked(request, self.list_display)

    def get_fields(self, request: HttpRequest, obj=None):
        names = [f.name for f in self.model._meta.concrete_fields]
        return self.swap_masked(request, names)


def display(value: Any) -> str:
    """A stored value as a column shows it (JSON as JSON)."""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return shown(value)
