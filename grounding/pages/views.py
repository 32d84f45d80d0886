"""The human-readable record view: one grounding link, read through the request's
reader like every other read. Nothing here reads model fields for display; the page
shows the document the reader returns and names what it withholds."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse

from grounding.choices import RecordState
from grounding.pages.quote import quote_marks
from grounding.selectors import get_link, revision_rows
from policies.actions import audit_refusal
from policies.kernel.refusals import Refusal
from policies.reader import reader_for


def timeline(link) -> list[dict[str, Any]]:
    """One entry per revision (its last history row), oldest first: who and why."""
    latest: dict[int, Any] = {}
    for row in revision_rows(link):
        latest[row.revision] = row
    return [
        {
            "revision": n,
            "at": latest[n].history_date,
            "actor": latest[n].history_user.get_username() if latest[n].history_user else None,
            "reason": latest[n].history_change_reason or "",
        }
        for n in sorted(latest)
    ]


@login_required
def grounding_page(request: HttpRequest, grounding_id) -> HttpResponse:
    try:
        link = get_link(grounding_id)
        document = reader_for(request).read(link)
    except Refusal as refusal:
        audit_refusal(
            "read",
            refusal.code,
            actor=request.user,
            grounding_id=_uuid(grounding_id),
            references={"view": "grounding-page"},
        )
        if refusal.code == "not_found":
            # Outside the reader's Dimensions a link answers as if it did not exist.
            raise Http404("no grounding link of yours has this id") from refusal
        # Default deny: without a covering decision the reader learns nothing more.
        return render(
            request,
            "grounding/forbidden.html",
            {"code": refusal.code, "detail": refusal.detail},
            status=403,
        )
    if link.record_state == RecordState.DISPOSED:
        return render(request, "grounding/tombstone.html", {"doc": document})
    passage = document.get("passage", {})
    anchor = document.get("anchor", {})
    marks = quote_marks(document)
    context = {
        "doc": document,
        "withheld": document["withheld"],
        "passage": passage,
        "anchor": anchor,
        "anchor_result": marks.recorded,
        "excerpt_withheld": "excerpt" not in passage,
        # Offsets only apply to the representation they were computed over.
        "anchor_applies": marks.applies,
        "marks": marks,
        "timeline": timeline(link),
        "admin_url": _admin_url(request, link),
    }
    return render(request, "grounding/link_detail.html", context)


def _admin_url(request: HttpRequest, link) -> str | None:
    if not request.user.is_staff:
        return None
    try:
        return reverse("admin:grounding_groundinglink_change", args=[link.pk])
    except NoReverseMatch:
        return None


def _uuid(value) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None
