"""The link changelist's columns, each cell from the row's document as the reader
returns it (`policies.reader`): a withheld group shows "withheld", a disposed link
only what its tombstone holds. Documents are read once per row and request; the
admin's queryset prefetches what they need, so a page costs a fixed number of
queries."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from grounding.admin.changes import sent_by
from grounding.admin.scoping import WITHHELD, display
from grounding.choices import DisplayState, RecheckState, RecordState, ResolutionState
from grounding.models import GroundingLink
from grounding.templatetags.grounding_tags import state_class
from policies.reader import reader_for


def link_columns(request: HttpRequest) -> tuple:
    def cell(name: str, label: str, read: Callable[[dict], Any], css: str = ""):
        @admin.display(description=label)
        def column(link: GroundingLink) -> str:
            document = _row_document(request, link)
            masked = format_html('<span class="registry-withheld">{}</span>', WITHHELD)
            if document is None:
                return masked
            if document["record_state"] == RecordState.DISPOSED and name not in _TOMBSTONE:
                return masked  # only the tombstone remains
            value = read(document)
            if isinstance(value, SafeString):
                return value
            if value == WITHHELD:
                return masked
            text = display(value)
            if css:
                return format_html('<span class="{}" title="{}">{}</span>', css, text, text)
            return text

        column.__name__ = name
        return column

    return (
        cell("link_id", "link", lambda d: d["grounding_id"][:13] + "…"),
        cell("proposition", "proposition", proposition, css="registry-clip"),
        cell("passage", "passage", lambda d: d["passage"]["passage_ref"], "registry-clip"),
        cell("states", "states", _states),
        sent_by,
        cell("support", "support", _support_kind),
        "dimension",
        _revision,
    )


def _row_document(request: HttpRequest, link: GroundingLink) -> dict | None:
    """The reader's document of a changelist row, read once per request."""
    cache = request.__dict__.setdefault("_grounding_row_documents", {})
    if link.pk not in cache:
        cache[link.pk] = reader_for(request).read_or_none(link)
    return cache[link.pk]


def proposition(document: dict) -> Any:
    """The statement's proposition (its ref when it states none), or withheld."""
    if "statement" not in document:
        return WITHHELD
    scope = document["statement"].get("claim_scope") or {}
    proposition = scope.get("proposition") if isinstance(scope, dict) else None
    return proposition or document["statement"]["statement_ref"]


# Columns a disposed link's tombstone still fills.
_TOMBSTONE = {"link_id", "states"}


def _states(document: dict) -> str:
    """The four states in one cell, from the row's document (each has a list filter)."""
    values = [
        ("record", "record", document["record_state"], RecordState),
        ("recheck", "recheck", document.get("recheck_state"), RecheckState),
        ("display", "display", document.get("display_state"), DisplayState),
        (
            "anchor resolution",
            "anchor",
            document.get("passage", {}).get("resolution_state"),
            ResolutionState,
        ),
    ]
    values = [v for v in values if v[2] is not None]  # a tombstone has its record state only
    return format_html_join(
        "",
        '<span class="registry-state {}" title="{} state">{}: {}</span>',
        (
            (state_class(value), name, short, dict(choices.choices).get(value, value))
            for name, short, value, choices in values
        ),
    )


@admin.display(description="rev.", ordering="revision")
def _revision(link: GroundingLink) -> int:
    return link.revision


def _support_kind(document: dict) -> Any:
    return document["support"]["support_kind"] if "support" in document else WITHHELD
