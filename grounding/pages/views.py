"""The human-readable record view: one grounding link, read through the request's
reader like every other read. Nothing here reads model fields for display; the page
shows the document the reader returns and names what it withholds."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse

from common.kernel.identifiers import parse_uuid
from common.kernel.refusals import Refusal
from grounding.choices import RecordState
from grounding.pages.quote import quote_marks
from grounding.selectors import get_link, revision_rows
from policies.actions import audit_refusal
from policies.choices import DisclosableField as F
from policies.reader import reader_for

# What the timeline says in place of an actor the reader is not shown.
WITHHELD = "withheld"


def timeline(link, withheld: list[str]) -> list[dict[str, Any]]:
    """One entry per revision (its last history row), oldest first: who and why.

    Who acted is shown only to a reader shown `assessments.reviewer`: the account
    that bound an assessment is the reviewer's, and actor identities go where
    reviewer identities go (API.md "Tenancy")."""
    actors_shown = F.ASSESSMENTS_REVIEWER not in withheld
    latest: dict[int, Any] = {}
    for row in revision_rows(link):
        latest[row.revision] = row
    return [
        {
            "revision": n,
            "at": latest[n].history_date,
            "actor": _actor(latest[n]) if actors_shown else WITHHELD,
            "reason": latest[n].history_change_reason or "",
        }
        for n in sorted(latest)
    ]


def _actor(row) -> str | None:
    return row.history_user.get_username() if row.history_user else None


@login_required
def grounding_page(request: HttpRequest, grounding_id) -> HttpResponse:
    try:
        link = get_link(grounding_id, actor=request.user)
        document = reader_for(request).read(link)
    except Refusal as refusal:
        audit_refusal(
            "read",
            refusal.code,
            actor=request.user,
            grounding_id=parse_uuid(grounding_id),
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
        # Withheld with anchor.selector or passage.excerpt (grounding.reader).
        "anchor_result_withheld": "anchor_result" not in anchor,
        "excerpt_withheld": "excerpt" not in passage,
        # Offsets only apply to the representation they were computed over.
        "anchor_applies": marks.applies,
        "marks": marks,
        "timeline": timeline(link, document["withheld"]),
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
