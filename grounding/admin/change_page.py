"""The change page of a grounding link in the admin: the link as the reader
discloses it, the revise form, the page actions' forms and the review context.

A mixin of `grounding.admin.links.GroundingLinkAdmin`, apart from it because the
page is most of the admin's code and none of the list's: it reads the link only
through the host's `_readable_link` (the per-user reader) and shows a disposed
link's `_tombstone`. Django's change view is kept for the revise form, whose save
calls `revise` (never Model.save()); the page actions call their services' entries.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, reverse

from common.kernel.refusals import Refusal
from grounding.admin.columns import proposition
from grounding.admin.forms import LinkChangeForm, RevisingForm, initial_from, revision_changes
from grounding.admin.page_actions import FORMS, action_forms, allowed_actions, run_action
from grounding.admin.review import explain_display, notifications_for
from grounding.choices import RecordState
from grounding.exports.web_annotation import pdf_page
from grounding.models import GroundingLink
from grounding.pages.quote import quote_marks
from policies.reader import reader_for


class LinkChangePage:
    """change_view and the hooks of Django's change view it keeps (module doc)."""

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
        # A PDF page: which page of which document (from disclosed members only).
        "pdf_page": pdf_page(passage),
        "pdf_title": passage.get("title"),
        "explanation": explain_display(document),
        "notifications": notifications_for(request, link, document),
    }
