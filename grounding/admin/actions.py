"""Admin actions on grounding links. What a user may see is the reader's
(`policies.reader`); these only write, through the services.

Every action calls an operation's public entry per link (policies.actions), so each
link is a transaction of its own: a refused link is reported by its code and leaves
the others done.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse

from common.kernel.refusals import Refusal
from grounding import services
from grounding.models import GroundingLink

# -- actions


class WithdrawForm(forms.Form):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}))
    authority_ref = forms.CharField(
        max_length=512, help_text="The recorded decision or authority behind the withdrawal."
    )
    scope = forms.CharField(max_length=255, required=False, initial="display")


def _report(
    modeladmin: admin.ModelAdmin,
    request: HttpRequest,
    verb: str,
    done: list[GroundingLink],
    refused: list[tuple[GroundingLink, Refusal]],
) -> None:
    if done:
        modeladmin.message_user(request, f"{verb}: {len(done)} link(s).", messages.SUCCESS)
    for link, refusal in refused:
        modeladmin.message_user(
            request,
            f"{link.grounding_id}: refused ({refusal.code}) — {refusal.detail}",
            messages.ERROR,
        )


@admin.action(description="Withdraw selected links (asks for a reason)", permissions=["withdraw"])
def withdraw_links(modeladmin, request: HttpRequest, queryset: QuerySet[GroundingLink]):
    if "apply" in request.POST:
        form = WithdrawForm(request.POST)
        if form.is_valid():
            done, refused = [], []
            for link in queryset:
                try:
                    services.withdraw(
                        actor=request.user,
                        grounding_id=link.pk,
                        expected_revision=link.revision,
                        withdrawal={k: v for k, v in form.cleaned_data.items() if v},
                    )
                    done.append(link)
                except Refusal as refusal:
                    refused.append((link, refusal))
            _report(modeladmin, request, "Withdrawn", done, refused)
            return None
    else:
        form = WithdrawForm()
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": "Withdraw grounding links",
        "opts": modeladmin.model._meta,
        "links": list(queryset),
        "form": form,
        "action": "withdraw_links",
        "action_checkbox_name": ACTION_CHECKBOX_NAME,
    }
    return TemplateResponse(request, "admin/grounding/groundinglink/withdraw.html", context)


@admin.action(description="Mark selected links for recheck", permissions=["change"])
def mark_for_recheck(modeladmin, request: HttpRequest, queryset: QuerySet[GroundingLink]):
    done, refused = [], []
    for link in queryset:
        try:
            services.revise(
                actor=request.user,
                grounding_id=link.pk,
                expected_revision=link.revision,
                changes={
                    "recheck_state": "pending_review",
                    "revision_reason": "marked for recheck in the admin",
                },
            )
            done.append(link)
        except Refusal as refusal:
            refused.append((link, refusal))
    _report(modeladmin, request, "Marked for recheck", done, refused)


@admin.action(description="Run the builtin anchor resolver", permissions=["resolve"])
def run_builtin_resolver(modeladmin, request: HttpRequest, queryset: QuerySet[GroundingLink]):
    done, refused = [], []
    for link in queryset:
        try:
            services.record_anchor_observation(
                actor=request.user,
                grounding_id=link.pk,
                expected_revision=link.revision,
                use_builtin_resolver=True,
                reason="builtin resolver run from the admin",
            )
            done.append(link)
        except Refusal as refusal:
            refused.append((link, refusal))
    _report(modeladmin, request, "Resolver ran", done, refused)
