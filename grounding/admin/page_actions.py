"""Withdraw and assess from the link's change page.

Each form posts the revision the page was loaded at (the If-Match of the API) and
calls one service; a refusal is shown on the page by its code, offenders on their
fields. Nothing here saves a model: `grounding.services` writes (and audits).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpRequest

from common.kernel.refusals import Refusal
from grounding import services
from grounding.choices import ReviewerKind, Verdict
from grounding.models import GroundingLink
from policies.choices import Role
from policies.reader import reader_for


class RefusalMixin:
    """Shows a service's refusal: offenders on their fields, the rest above the form."""

    def add_refusal(self, refusal: Refusal) -> None:
        self.refusal_code = refusal.code
        if not refusal.offenders:
            self.add_error(None, f"{refusal.detail} ({refusal.code})")
        for offender in refusal.offenders:
            name = offender.pointer.strip("/").split("/")[0]
            message = f"{offender.pointer or '/'}: {offender.detail} ({offender.code})"
            self.add_error(name if name in self.fields else None, message)


class PageWithdrawForm(RefusalMixin, forms.Form):
    prefix = "withdraw"
    loaded_revision = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}))
    authority_ref = forms.CharField(
        max_length=512, help_text="The recorded decision or authority behind the withdrawal."
    )
    scope = forms.CharField(max_length=255, required=False, initial="display")
    decision_ref = forms.CharField(max_length=512, required=False)

    def call(self, request: HttpRequest, link: GroundingLink) -> str:
        data = self.cleaned_data
        services.withdraw(
            actor=request.user,
            grounding_id=link.pk,
            expected_revision=data["loaded_revision"],
            withdrawal={
                k: data[k] for k in ("reason", "authority_ref", "scope", "decision_ref") if data[k]
            },
        )
        return "Withdrawn."


class PageAssessForm(RefusalMixin, forms.Form):
    prefix = "assess"
    loaded_revision = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    assessment_ref = forms.CharField(max_length=512)
    verdict = forms.ChoiceField(choices=Verdict.choices)
    reviewer_ref = forms.CharField(max_length=512)
    reviewer_kind = forms.ChoiceField(choices=ReviewerKind.choices, initial=ReviewerKind.HUMAN)
    method_ref = forms.CharField(max_length=512, initial="urn:method:curator-reading@1")
    authority_ref = forms.CharField(
        max_length=512,
        required=False,
        help_text="Without an authority_ref the assessment is recorded but not weighed.",
    )
    selection_basis_ref = forms.CharField(
        max_length=512,
        required=False,
        help_text="A policy that selects this assessment over disagreeing ones.",
    )
    rationale_ref = forms.CharField(max_length=512, required=False)

    def call(self, request: HttpRequest, link: GroundingLink) -> str:
        data = self.cleaned_data
        body: dict[str, Any] = {
            k: data[k]
            for k in (
                "assessment_ref",
                "verdict",
                "reviewer_ref",
                "reviewer_kind",
                "method_ref",
                "authority_ref",
                "selection_basis_ref",
                "rationale_ref",
            )
            if data[k]
        }
        # Assessed at the loaded revision: a page loaded before a change is refused
        # (assessment_input_mismatch or revision_mismatch), never bound to new inputs.
        body["assessed_inputs"] = {"grounding_revision": data["loaded_revision"]}
        services.bind_assessment(
            actor=request.user,
            grounding_id=link.pk,
            expected_revision=data["loaded_revision"],
            assessment=body,
        )
        return f"Assessment {data['assessment_ref']} bound."


FORMS = {"withdraw": PageWithdrawForm, "assess": PageAssessForm}


def allowed_actions(request: HttpRequest, link: GroundingLink, document: dict) -> set[str]:
    """The page actions the user's roles in the link's Dimension allow (the services
    check again; this only decides which forms are offered)."""
    if document["record_state"] in ("withdrawn", "disposed"):
        return set()
    if not request.user.is_staff:
        return set()
    roles = reader_for(request).roles(link.dimension_id)
    allowed = set()
    if roles & {Role.CURATOR, Role.ACCESS_STEWARD}:
        allowed.add("withdraw")
    if Role.REVIEWER in roles:
        allowed.add("assess")
    return allowed


def action_forms(document: dict, bound: forms.Form | None = None) -> dict[str, forms.Form]:
    """One unbound form per action at the document's revision (the bound one kept)."""
    out: dict[str, forms.Form] = {}
    for name, form_class in FORMS.items():
        if bound is not None and isinstance(bound, form_class):
            out[name] = bound
        else:
            out[name] = form_class(initial={"loaded_revision": document["revision"]})
    return out


def run_action(
    request: HttpRequest, name: str, link: GroundingLink
) -> tuple[forms.Form, str | None]:
    """Bind the posted form and call its service: (form, success message or None)."""
    form = FORMS[name](request.POST)
    if not form.is_valid():
        return form, None
    try:
        return form, form.call(request, link)
    except Refusal as refusal:
        form.add_refusal(refusal)
        return form, None
