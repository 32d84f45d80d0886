"""Curator admin for grounding links and the records bound to them.

Thin by design: reads go through the disclosure projection, writes through the
services. Who sees and does what follows Dimension roles (not Django model
permissions): any role in a link's Dimension lets a staff user view it (with the
fields their decisions withhold shown as withheld); the curator role lets them
revise it. Append-only records are read-only here.

This module is the link admin's list, rights and routes, and the one way its pages
read a link (`_readable_link`, through the per-user reader); the change page
(`grounding.admin.change_page`) and the history pages (`grounding.admin.history`)
are its mixins.
"""

from __future__ import annotations

from django.contrib import admin
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest
from django.template.response import TemplateResponse
from django.urls import path

from common.kernel.refusals import Refusal
from common.web.admin_base import ANY, DimensionListFilter, ProfileListFilter, holds
from grounding.admin.actions import (
    mark_for_recheck,
    run_builtin_resolver,
    withdraw_links,
)
from grounding.admin.change_page import LinkChangePage
from grounding.admin.changes import (
    PENDING_FIRST,
    send_overdue_to_review,
    with_sending_notification,
)
from grounding.admin.columns import link_columns
from grounding.admin.history import LinkHistory
from grounding.admin.scoping import LIVE, LinkScopedAdmin
from grounding.admin.widgets import validate_json_view
from grounding.choices import RecordState
from grounding.models import (
    GroundingLink,
)
from grounding.selectors import for_read
from policies.choices import DisclosableField as F
from policies.choices import Role
from policies.reader import reader_for


@admin.register(GroundingLink)
class GroundingLinkAdmin(LinkChangePage, LinkHistory, LinkScopedAdmin):
    link_path = ""
    list_filter = (
        ("dimension", DimensionListFilter),
        "record_state",
        "recheck_state",
        "display_state",
        "support_kind",
        "resolution_state",
        ("profile", ProfileListFilter),
    )
    search_fields = (
        "=grounding_id",
        "master_ref",
        "current_statement__statement_ref",
        "current_passage__passage_ref",
        "current_passage__passage__canonical_url",
        "current_passage__passage__locator",
    )
    date_hierarchy = "observed_at"
    # What each search field, filter and drill-down selects on. A disposed link's
    # tombstone shows its id, revision, record state, Dimension and observed_at: it is
    # found by nothing else (LIVE); the groups are matched where they are disclosed.
    reveals = {
        "grounding_id": ANY,
        "revision": ANY,
        "dimension": ANY,
        "record_state": ANY,
        "observed_at": ANY,
        "master_ref": LIVE,
        "recheck_state": LIVE,
        "display_state": LIVE,
        "resolution_state": LIVE,
        "profile": LIVE,
        "current_passage__passage_ref": LIVE,
        "current_statement__statement_ref": F.STATEMENT,
        "support_kind": F.SUPPORT,
        "current_passage__passage__canonical_url": F.PASSAGE_LOCATOR,
        "current_passage__passage__locator": F.PASSAGE_LOCATOR,
    }
    # The review queue of a change notification (its admin links here with these).
    extra_lookups = {"change_ref": LIVE}
    list_select_related = (
        "dimension",
        "profile",
        "current_statement",
        "current_passage__passage",
    )
    list_per_page = 50
    actions = (withdraw_links, mark_for_recheck, run_builtin_resolver, send_overdue_to_review)
    object_history_template = "admin/grounding/groundinglink/object_history.html"

    # The list leaves out the app sidebar, so it fits 1,280 px beside the filters.
    change_list_template = "admin/grounding/groundinglink/change_list.html"

    class Media:
        css = {"all": ("grounding/admin.css",)}

    # -- rights follow Dimension roles

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # links are registered by clients through the API

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False  # withdraw instead; disposal needs a storage receipt

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is None:
            return holds(request, Role.CURATOR)
        final = obj.record_state in (RecordState.WITHDRAWN, RecordState.DISPOSED)
        return not final and holds(request, Role.CURATOR, dimension_id=obj.dimension_id)

    def has_withdraw_permission(self, request: HttpRequest) -> bool:
        return holds(request, Role.CURATOR, Role.ACCESS_STEWARD)

    def has_resolve_permission(self, request: HttpRequest) -> bool:
        return holds(request, Role.CURATOR, Role.REVIEWER)

    # -- the review queue: pending links first, with the notification that sent them

    def get_queryset(self, request: HttpRequest):
        # Joined and prefetched like the API's lists, so each row's document is read
        # through the reader at a fixed number of queries per page.
        return with_sending_notification(for_read(super().get_queryset(request)))

    def get_ordering(self, request: HttpRequest):
        return [PENDING_FIRST.asc(), "-grounding_id"]

    # -- list columns: each row's document from the reader (withheld shows "withheld")

    def get_list_display(self, request: HttpRequest):
        return link_columns(request)

    # -- the pages' routes, and the one way they read a link

    def get_urls(self):
        compare = self.admin_site.admin_view(self.compare_view)
        check = self.admin_site.admin_view(validate_json_view)
        return [
            path("validate-json/<str:schema>/", check, name="grounding_validate_json"),
            path("<path:object_id>/history/compare/", compare, name="grounding_link_compare"),
            path(
                "<path:object_id>/history/proof/<int:revision>/",
                self.admin_site.admin_view(self.proof_view),
                name="grounding_link_proof",
            ),
            *super().get_urls(),
        ]

    def _readable_link(self, request: HttpRequest, object_id: str) -> tuple[GroundingLink, dict]:
        """The link `object_id` names among this reader's rows and its document as the
        reader discloses it: every page reads a link here, never from the model alone
        (404 for a link outside those rows, 403 for one the reader refuses)."""
        try:
            link = self.get_queryset(request).get(pk=object_id)
        except (GroundingLink.DoesNotExist, ValueError, ValidationError) as exc:
            raise Http404("no readable grounding link has this id") from exc
        if not self.has_view_permission(request, link):
            raise PermissionDenied
        try:
            return link, reader_for(request).read(link)
        except Refusal as refusal:
            if refusal.code == "not_found":
                raise Http404("no readable grounding link has this id") from refusal
            raise PermissionDenied(refusal.detail) from refusal

    def _tombstone(self, request: HttpRequest, link: GroundingLink, document: dict):
        """What the change and compare pages show of a disposed link."""
        context = {
            **self.admin_site.each_context(request),
            "title": f"Grounding link {link.grounding_id} (disposed)",
            "opts": self.model._meta,
            "original": link,
            "doc": document,
        }
        return TemplateResponse(request, "admin/grounding/groundinglink/tombstone.html", context)
