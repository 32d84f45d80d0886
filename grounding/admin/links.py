"""Curator admin for grounding links and the records bound to them.

Thin by design: reads go through the disclosure projection, writes through the
services. Who sees and does what follows Dimension roles (not Django model
permissions): any role in a link's Dimension lets a staff user view it (with the
fields their decisions withhold shown as withheld); the curator role lets them
revise it. Append-only records are read-only here.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, path, reverse
from django.utils.text import capfirst

from common.kernel.refusals import Refusal
from common.web.admin_base import ANY, DimensionListFilter, ProfileListFilter, holds
from grounding.admin.actions import (
    mark_for_recheck,
    run_builtin_resolver,
    withdraw_links,
)
from grounding.admin.changes import (
    PENDING_FIRST,
    send_overdue_to_review,
    with_sending_notification,
)
from grounding.admin.columns import link_columns, proposition
from grounding.admin.forms import (
    LinkChangeForm,
    RevisingForm,
    initial_from,
    revision_changes,
    revision_table,
)
from grounding.admin.page_actions import FORMS, action_forms, allowed_actions, run_action
from grounding.admin.review import explain_display, notifications_for
from grounding.admin.scoping import LIVE, LinkScopedAdmin
from grounding.admin.widgets import validate_json_view
from grounding.choices import RecordState
from grounding.models import (
    GroundingLink,
)
from grounding.pages.quote import quote_marks
from grounding.reader import ALL_WITHHELD
from grounding.selectors import for_read
from policies.choices import DisclosableField as F
from policies.choices import Role
from policies.reader import reader_for
from transparency import proofs, status


@admin.register(GroundingLink)
class GroundingLinkAdmin(LinkScopedAdmin):
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

    # -- the change page

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

    def _page(self, request: HttpRequest, object_id: Any) -> tuple[GroundingLink, dict]:
        """The link the change page shows and its document as the reader discloses it:
        read once per request (the view, Django's get_object, get_form and
        render_change_form all need it)."""
        cached = getattr(request, "_grounding_change_page", None)
        if cached is None or str(cached[0].pk) != str(object_id):
            cached = self._readable_link(request, str(object_id))
            request._grounding_change_page = cached
        return cached

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context=None
    ) -> HttpResponse:
        link, document = self._page(request, object_id)
        if link.record_state == RecordState.DISPOSED:
            return self._tombstone(request, link, document)
        action = request.POST.get("_action") if request.method == "POST" else None
        if action in FORMS:
            # Withdraw and assess are the services' to allow (a reviewer assesses what
            # they may not revise), so they are not changes Django's change permission
            # decides: each form calls its operation's public entry (no transaction is
            # open yet), and a refused action is shown by its code.
            acted, done = run_action(request, action, link)
            if done:
                self.message_user(request, done, messages.SUCCESS)
                return HttpResponseRedirect(request.path)
            form = LinkChangeForm(
                initial=initial_from(document), profile=link.profile, withheld=document["withheld"]
            )
            return self._page_response(request, link, document, form, acted=(action, acted))
        # The revise form goes through Django's change view, whose POST is one
        # transaction; RevisingForm makes the revision in it (grounding.admin.forms).
        return super().change_view(request, object_id, form_url, extra_context)

    # -- Django's change view, for a form whose save calls `revise`, never Model.save()

    def get_object(self, request: HttpRequest, object_id: str, from_field=None):
        return self._page(request, object_id)[0]

    def get_fields(self, request: HttpRequest, obj=None):
        return list(LinkChangeForm.base_fields)

    def get_form(self, request: HttpRequest, obj=None, change=False, **kwargs):
        _, document = self._page(request, obj.pk)
        return partial(RevisingForm, actor=request.user, document=document)

    def save_form(self, request: HttpRequest, form: RevisingForm, change: bool):
        return form.revised  # revise saved it while the form was validated

    def save_model(self, request: HttpRequest, obj, form, change: bool) -> None:
        pass  # saved by revise

    def save_related(self, request: HttpRequest, form, formsets, change: bool) -> None:
        pass

    def log_change(self, request: HttpRequest, obj, message) -> None:
        pass  # the revision's audit event and history row record the change

    def response_change(self, request: HttpRequest, obj: GroundingLink) -> HttpResponse:
        self.message_user(request, f"Saved as revision {obj.revision}.", messages.SUCCESS)
        return HttpResponseRedirect(request.path)

    def render_change_form(
        self, request: HttpRequest, context, add=False, change=False, form_url="", obj=None
    ) -> HttpResponse:
        link, document = self._page(request, obj.pk)
        form, conflict = context["adminform"].form, None
        if form.refusal is not None and form.refusal.code == "revision_mismatch":
            form, conflict = self._conflict(request, link, document, form)
        return self._page_response(request, link, document, form, conflict=conflict, base=context)

    def _page_response(
        self,
        request: HttpRequest,
        link: GroundingLink,
        document: dict,
        form,
        *,
        conflict=None,
        acted: tuple[str, Any] | None = None,
        base: dict | None = None,
    ) -> TemplateResponse:
        """The change page: the revise form, the page actions' forms (a refused
        action's kept with its refusal), the review context."""
        name, bound = acted or ("", None)
        context = {
            **(base or {}),
            **self.admin_site.each_context(request),
            "title": f"Grounding link {link.grounding_id}",
            "opts": self.model._meta,
            "original": link,
            "document": document,
            "withheld": document["withheld"],
            "form": form,
            "can_change": self.has_change_permission(request, link),
            "conflict": conflict,
            "page_url": _page_url(link),
            "media": self.media + form.media,
            **_review_context(request, link, document),
            # A refused action's form stays on the page with the refusal's code.
            "actions_allowed": allowed_actions(request, link, document)
            | ({name} if name else set()),
            "action_forms": action_forms(document, bound),
            "acted": name,
        }
        return TemplateResponse(request, "admin/grounding/groundinglink/change_form.html", context)

    def _tombstone(self, request: HttpRequest, link: GroundingLink, document: dict):
        context = {
            **self.admin_site.each_context(request),
            "title": f"Grounding link {link.grounding_id} (disposed)",
            "opts": self.model._meta,
            "original": link,
            "doc": document,
        }
        return TemplateResponse(request, "admin/grounding/groundinglink/tombstone.html", context)

    def _conflict(self, request, link, document, form: RevisingForm):
        """Re-render with the curator's edits kept and what changed since named."""
        loaded = form.cleaned_data["loaded_revision"]
        link.refresh_from_db()
        reader = reader_for(request)
        current_doc = reader.read(link)
        try:
            loaded_doc = reader.read(link, revision=loaded)
        except Refusal:
            loaded_doc = document
        data, both = form.merged_after_conflict(initial_from(loaded_doc), initial_from(current_doc))
        rebound = LinkChangeForm(data, profile=link.profile, withheld=current_doc["withheld"])
        rebound.is_valid()
        conflict = {
            "loaded_revision": loaded,
            "current_revision": current_doc["revision"],
            "changes": revision_changes(
                link, loaded, current_doc["revision"], current_doc["withheld"]
            ),
            "both_changed": both,
        }
        return rebound, conflict

    # -- history: readable revisions and a diff between any two (no revert form)

    def history_view(self, request: HttpRequest, object_id: str, extra_context=None):
        link, document = self._readable_link(request, unquote(object_id))
        # A disposed link's history is its tombstone: no revision is listed.
        disposed = link.record_state == RecordState.DISPOSED
        withheld = ALL_WITHHELD if disposed else document["withheld"]
        context = {
            **self.admin_site.each_context(request),
            "title": f"History: {link}",
            "subtitle": None,
            "opts": self.opts,
            "module_name": capfirst(self.opts.verbose_name_plural),
            "object": link,
            "revisions": [] if disposed else _with_log_status(link, revision_table(link, withheld)),
            "withheld": withheld,
            **(extra_context or {}),
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, self.object_history_template, context)

    def proof_view(self, request: HttpRequest, object_id: str, revision: int) -> HttpResponse:
        """Revision n's proof, as GET …/revisions/{n}/proof/ answers it, to download."""
        link, _ = self._readable_link(request, unquote(object_id))
        log = proofs.log_of(link.dimension_id)
        leaf = proofs.revision_leaf(log, link.grounding_id, revision)
        if leaf is None:
            raise Http404("no sequenced leaf of the log records this revision (yet)")
        response = JsonResponse(proofs.revision_proof(log, leaf))
        response["Content-Disposition"] = (
            f'attachment; filename="{link.grounding_id}-r{revision}-proof.json"'
        )
        return response

    def compare_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        link, document = self._readable_link(request, object_id)
        if link.record_state == RecordState.DISPOSED:
            return self._tombstone(request, link, document)
        try:
            old = int(request.GET.get("from", max(link.revision - 1, 1)))
            new = int(request.GET.get("to", link.revision))
        except ValueError as exc:
            raise Http404("revisions are numbers") from exc
        if not (1 <= old <= link.revision and 1 <= new <= link.revision):
            raise Http404("no such revision")
        table = [
            r for r in revision_table(link, document["withheld"]) if old < r["revision"] <= new
        ]
        context = {
            **self.admin_site.each_context(request),
            "title": f"Revision {old} → {new} of {link.grounding_id}",
            "opts": self.model._meta,
            "original": link,
            "old": old,
            "new": new,
            "revisions": list(range(1, link.revision + 1)),
            "changes": revision_changes(link, old, new, document["withheld"]),
            "between": table,
            "withheld": document["withheld"],
        }
        return TemplateResponse(
            request, "admin/grounding/groundinglink/history_compare.html", context
        )


def _with_log_status(link: GroundingLink, table: list[dict]) -> list[dict]:
    """Each revision row with its standing in the Dimension's transparency log."""
    log = proofs.log_of(link.dimension_id)
    statuses = status.revision_statuses(log, link.grounding_id, [r["revision"] for r in table])
    return [{**row, "log": statuses[row["revision"]]} for row in table]


def _page_url(link: GroundingLink) -> str | None:
    try:
        return reverse("grounding-page", args=[link.pk])
    except NoReverseMatch:  # the human views may not be routed in every deployment
        return None


def _review_context(request: HttpRequest, link: GroundingLink, document: dict) -> dict:
    """What the page shows beside the form: the proposition, the passage text with
    the quote marked (`grounding.pages.quote`), the display explanation and the
    notifications."""
    passage = document["passage"]
    marks = quote_marks(document)
    return {
        "proposition": proposition(document),
        "statement_withheld": "statement" not in document,
        "excerpt_withheld": "excerpt" not in passage,
        "excerpt": marks.text,
        "anchor_result": marks.recorded,
        "anchor_applies": marks.applies,
        "marks": marks,
        "explanation": explain_display(document),
        "notifications": notifications_for(request, link, document),
    }
