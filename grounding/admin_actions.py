"""Admin actions on grounding links, and the per-request access helpers (roles,
readable scope, disclosure) the grounding admin shares with them.

Every action calls a service per link (each in its own durable transaction, which
is why none of this may run inside an `atomic` block) and reports refusals by code.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse

from evidence.choices import AccessLabel
from grounding import services
from grounding.models import GroundingLink
from grounding.projection import FIELD_PATHS, DecisionCache, coverage, disclose, readers_for_user
from grounding.selectors import current_records
from policies.models import Dimension, DimensionMembership
from policies.refusals import Refusal

# -- disclosure, once per request


def decision_cache(request: HttpRequest) -> DecisionCache:
    """Decisions fetched once per request, so list pages stay at a fixed query count."""
    cache = getattr(request, "_grounding_decisions", None)
    if cache is None:
        cache = DecisionCache()
        request._grounding_decisions = cache
    return cache


def disclosed(request: HttpRequest, link: GroundingLink, records=None) -> dict[str, Any]:
    """The link document this user may read; raises `disclosure_not_decided`."""
    readers = readers_for_user(request.user, link.dimension)
    document, _ = disclose(
        link,
        records if records is not None else current_records(link),
        coverage(link, readers, decision_cache(request)),
    )
    return document


def withheld_for(request: HttpRequest, link: GroundingLink) -> list[str] | None:
    """Field names withheld from this user on `link` (None: nothing is disclosed).

    The same rule as `disclose`, without building the whole document: list columns
    need only the names.
    """
    readers = readers_for_user(request.user, link.dimension)
    found = coverage(link, readers, decision_cache(request))
    if not found.decided:
        return None
    passage = link.current_passage.passage if link.current_passage_id else None
    restricted = bool(passage and passage.access_label == AccessLabel.RESTRICTED)
    return sorted(set(FIELD_PATHS) - found.visible(source_restricted=restricted))


def roles_by_dimension(request: HttpRequest) -> dict[int, set[str]]:
    """The user's roles per Dimension id, fetched once per request."""
    cached = getattr(request, "_grounding_roles", None)
    if cached is None:
        cached = {}
        rows = DimensionMembership.objects.filter(user_id=request.user.pk)
        for dimension_id, role in rows.values_list("dimension_id", "role"):
            cached.setdefault(dimension_id, set()).add(role)
        request._grounding_roles = cached
    return cached


def holds(request: HttpRequest, *roles: str, dimension_id: int | None = None) -> bool:
    """Staff holding one of `roles` (any role if none given), in one Dimension or any."""
    if not (request.user.is_active and request.user.is_staff):
        return False
    held = roles_by_dimension(request)
    scopes = [held.get(dimension_id, set())] if dimension_id is not None else held.values()
    return any(r & set(roles) if roles else r for r in scopes)


def readable_q(request: HttpRequest, prefix: str = "") -> Q:
    """Links a covering decision lets this user read: whole Dimensions or listed ids."""
    scope = Q(pk__in=[])
    dimensions = Dimension.objects.filter(pk__in=list(roles_by_dimension(request)))
    for dimension in dimensions:
        listed: set[str] = set()
        for reader in readers_for_user(request.user, dimension):
            for decision in decision_cache(request).decisions(dimension, reader):
                if decision.grounding_ids is None:
                    scope |= Q(**{f"{prefix}dimension_id": dimension.pk})
                else:
                    listed |= {str(g) for g in decision.grounding_ids}
        if listed:
            scope |= Q(
                **{f"{prefix}dimension_id": dimension.pk, f"{prefix}grounding_id__in": listed}
            )
    return scope


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
