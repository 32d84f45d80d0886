"""The link change form and the revision diff it shows on a conflict.

The form never saves a model: it turns what the curator changed into the `changes`
dict of `grounding.services.revise`, guarded by the revision the form was loaded at.
Fields whose disclosable group is withheld from the curator are left out of the
form entirely (and named as withheld by the page), so they can neither be read
nor overwritten through it. `RevisingForm` is the one the change page's POST
validates: it makes the revision.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django import forms

from common.kernel.refusals import Refusal
from grounding.admin.widgets import SchemaJSONField
from grounding.choices import RecordState, SupportKind, UseBasis
from grounding.models import GroundingLink, PassageBinding, StatementBinding
from grounding.reader import FIELD_PATHS
from grounding.services import do_revise, refusal_context
from policies.actions import refusal_audited, refuse_invalid, unstorable_input
from policies.choices import DisclosableField as F

# The disclosable group each editable field belongs to (None: always visible).
FIELD_GROUPS: dict[str, str | None] = {
    "owner_ref": None,
    "record_state": None,
    "statement_ref": F.STATEMENT,
    "support_kind": F.SUPPORT,
    "use_basis": F.SUPPORT,
    "support_scope": F.SUPPORT,
    "source_selector": F.ANCHOR_SELECTOR,
}
_SUPPORT_KEYS = ("support_kind", "use_basis", "support_scope")
# Where a refusal's offender pointer lands in the form.
_POINTER_FIELDS = {
    "/owner_ref": "owner_ref",
    "/record_state": "record_state",
    "/statement/statement_ref": "statement_ref",
    "/support/support_kind": "support_kind",
    "/support/use_basis": "use_basis",
    "/support/generation_evidence_ref": "use_basis",
    "/support/support_scope": "support_scope",
    "/anchor/source_selector": "source_selector",
    "/revision_reason": "revision_reason",
}


def initial_from(document: dict[str, Any]) -> dict[str, Any]:
    """Form values from a disclosed link document (withheld groups are absent)."""
    initial: dict[str, Any] = {
        "loaded_revision": document["revision"],
        "owner_ref": document["owner_ref"],
        "record_state": document["record_state"],
    }
    if "statement" in document:
        initial["statement_ref"] = document["statement"]["statement_ref"]
    if "support" in document:
        initial.update({key: document["support"][key] for key in _SUPPORT_KEYS})
    if "source_selector" in document.get("anchor", {}):
        initial["source_selector"] = document["anchor"]["source_selector"]
    return initial


class LinkChangeForm(forms.Form):
    loaded_revision = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    owner_ref = forms.CharField(max_length=255, label="Owner")
    record_state = forms.ChoiceField(
        choices=[(s.value, s.label) for s in (RecordState.CANDIDATE, RecordState.ADMITTED)],
        help_text="Withdrawal has an action of its own.",
    )
    statement_ref = forms.CharField(max_length=512, label="Statement ref")
    support_kind = forms.ChoiceField(choices=SupportKind.choices)
    use_basis = forms.ChoiceField(
        choices=UseBasis.choices, help_text="Recorded, never inferred from a citation."
    )
    # Structured values: a JSON editor checked against the shipped schemas.
    support_scope = SchemaJSONField("support_scope", help_text="What the passage covers.")
    source_selector = SchemaJSONField(
        "selector",
        label="Source selector",
        help_text="A W3C selector; offsets are NFC code points, half-open.",
    )
    revision_reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Why this revision is made; recorded in the link's history.",
    )

    def __init__(self, *args: Any, profile=None, withheld: list[str] = (), **kwargs: Any):
        super().__init__(*args, **kwargs)
        if profile is not None and profile.support_vocabulary:
            allowed = set(profile.support_vocabulary)
            self.fields["support_kind"].choices = [
                c for c in SupportKind.choices if c[0] in allowed
            ]
        self.withheld_fields = [
            name for name, group in FIELD_GROUPS.items() if group and group in withheld
        ]
        for name in self.withheld_fields:
            del self.fields[name]

    def changes(self, current: dict[str, Any]) -> dict[str, Any]:
        """The `revise` changes: only fields whose value differs from `current`."""
        data = self.cleaned_data
        changed = {
            name for name in FIELD_GROUPS if name in self.fields and data[name] != current.get(name)
        }
        changes: dict[str, Any] = {"revision_reason": data["revision_reason"]}
        for name in ("owner_ref", "record_state"):
            if name in changed:
                changes[name] = data[name]
        if "statement_ref" in changed:
            changes["statement"] = {"statement_ref": data["statement_ref"]}
        support = {key: data[key] for key in _SUPPORT_KEYS if key in changed}
        if support:
            changes["support"] = support
        if "source_selector" in changed:
            changes["anchor"] = {"source_selector": data["source_selector"]}
        return changes

    def add_refusal(self, refusal: Refusal) -> None:
        """Show a refusal's offenders on their fields; anything else above the form."""
        if not refusal.offenders:
            self.add_error(None, f"{refusal.detail} ({refusal.code})")
        for offender in refusal.offenders:
            field = next(
                (
                    name
                    for pointer, name in _POINTER_FIELDS.items()
                    if offender.pointer == pointer or offender.pointer.startswith(pointer + "/")
                ),
                None,
            )
            message = f"{offender.detail} ({offender.code})"
            self.add_error(field if field in self.fields else None, message)

    def merged_after_conflict(
        self, loaded: dict[str, Any], current: dict[str, Any]
    ) -> tuple[dict[str, str], list[str]]:
        """Form data for the re-rendered form: the curator's edits kept, every field
        they did not touch moved on to the current value; plus the fields both sides
        changed (true conflicts)."""
        data = {name: self.data.get(name, "") for name in self.fields}
        both: list[str] = []
        for name in FIELD_GROUPS:
            if name not in self.fields:
                continue
            mine = self.cleaned_data.get(name)
            if mine == loaded.get(name):
                data[name] = _as_data(self.fields[name], current.get(name))
            elif loaded.get(name) != current.get(name):
                both.append(name)
        data["loaded_revision"] = str(current["loaded_revision"])
        return data, both


class RevisingForm(LinkChangeForm):
    """The change form as Django's change view drives it (ModelAdmin.get_form): valid
    exactly when `revise` accepts the edit.

    Django's change view saves once the form is valid and logs and redirects after;
    a link changes only through `revise`, whose refusal must come back as the form's
    errors. So the revision is made while the form is validated (`clean`): revise's
    body runs in the change view's transaction under `refusal_audited`, so a refusal
    rolls back its own writes only, leaves its refused audit event (committed with
    the page's transaction) and becomes errors here; `refusal` keeps it (the page
    shows a revision_mismatch as a conflict) and `revised` the revised link.
    """

    def __init__(
        self, data=None, files=None, *, instance: GroundingLink, actor, document: dict[str, Any]
    ):
        super().__init__(
            data,
            files,
            initial=initial_from(document),
            profile=instance.profile,
            withheld=document["withheld"],
        )
        self.instance = instance  # what Django's change view hands on when valid
        self.actor = actor
        self.document = document
        self.revised: GroundingLink | None = None
        self.refusal: Refusal | None = None

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if not self.errors:
            self._revise(cleaned)
        return cleaned

    def _revise(self, cleaned: dict[str, Any]) -> None:
        kwargs = {
            "actor": self.actor,
            "grounding_id": self.instance.pk,
            "expected_revision": cleaned["loaded_revision"],
            "changes": self.changes(initial_from(self.document)),
        }
        try:
            with refusal_audited("revise", **refusal_context(kwargs)):
                # What the public entry would screen, before anything is looked up.
                refuse_invalid(unstorable_input(kwargs))
                self.revised = do_revise(**kwargs)
        except Refusal as refusal:
            self.refusal = refusal
            if refusal.code == "revision_mismatch":
                self.add_error(None, f"{refusal.detail} ({refusal.code})")
            else:
                self.add_refusal(refusal)


def _as_data(field: forms.Field, value: Any) -> str:
    if isinstance(field, forms.JSONField):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


# -- the readable difference between two revisions


@dataclass(frozen=True)
class FieldChange:
    field: str
    old: str
    new: str
    withheld: bool = False


# Link columns a reader sees only through a disclosable group.
_COLUMN_GROUPS = {
    "support_kind": F.SUPPORT,
    "support_scope": F.SUPPORT,
    "support_limits": F.SUPPORT,
    "support_verdict_ref": F.SUPPORT,
    "use_basis": F.SUPPORT,
    "generation_evidence_ref": F.SUPPORT,
    "displayed_verdict": F.ASSESSMENTS_VERDICT,
}
# Bookkeeping shown elsewhere (revision, reason) or through the bindings below.
_SKIPPED = {
    "grounding_id",
    "revision",
    "basis_revision",
    "predecessor_ref",
    "revision_reason",
    "current_statement",
    "current_passage",
    "current_anchor_observation",
    "dimension",
    "profile",
    "created_by",
    "updated_at",
}
_DIFF_COLUMNS = [f.attname for f in GroundingLink._meta.concrete_fields if f.name not in _SKIPPED]


def _snapshot(row: Any, statements: dict, passages: dict) -> dict[str, tuple[Any, str | None]]:
    values: dict[str, tuple[Any, str | None]] = {
        name: (getattr(row, name), _COLUMN_GROUPS.get(name)) for name in _DIFF_COLUMNS
    }
    statement = statements.get(row.current_statement_id)
    passage = passages.get(row.current_passage_id)
    values["statement.statement_ref"] = (statement and statement.statement_ref, F.STATEMENT)
    values["passage.passage_ref"] = (passage and passage.passage_ref, None)
    values["anchor.source_selector"] = (passage and passage.source_selector, F.ANCHOR_SELECTOR)
    return values


def _show(value: Any) -> str:
    if value in (None, "", [], {}):
        return "—"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def _diff(
    before: dict[str, tuple[Any, str | None]],
    after: dict[str, tuple[Any, str | None]],
    hidden: set[str],
) -> list[FieldChange]:
    out: list[FieldChange] = []
    for name, (value, group) in after.items():
        previous = before[name][0]
        if previous == value:
            continue
        if group in hidden:
            out.append(FieldChange(name, "withheld", "withheld", withheld=True))
        else:
            out.append(FieldChange(name, _show(previous), _show(value)))
    return out


def _snapshots(link: GroundingLink, revisions: set[int] | None) -> dict[int, tuple[Any, dict]]:
    """(history row, snapshot) per revision, bindings fetched in one query each."""
    history = GroundingLink.history.filter(grounding_id=link.grounding_id)
    if revisions is not None:
        history = history.filter(revision__in=revisions)
    rows: dict[int, Any] = {}
    for row in history.select_related("history_user").order_by("history_date", "history_id"):
        rows[row.revision] = row  # the last row of each revision
    statements = StatementBinding.objects.in_bulk(
        [r.current_statement_id for r in rows.values() if r.current_statement_id]
    )
    passages = PassageBinding.objects.in_bulk(
        [r.current_passage_id for r in rows.values() if r.current_passage_id]
    )
    return {n: (row, _snapshot(row, statements, passages)) for n, row in rows.items()}


def revision_changes(
    link: GroundingLink, old: int, new: int, withheld: list[str]
) -> list[FieldChange]:
    """What differs between revision `old` and revision `new` of the link, field by
    field; values of groups withheld from the reader are shown as withheld."""
    snaps = _snapshots(link, {old, new})
    if old not in snaps or new not in snaps:
        return []
    return _diff(snaps[old][1], snaps[new][1], set(withheld) & set(FIELD_PATHS))


def revision_table(link: GroundingLink, withheld: list[str]) -> list[dict[str, Any]]:
    """Every revision, oldest first: when, who, why, and what changed from the one before."""
    snaps = _snapshots(link, None)
    hidden = set(withheld) & set(FIELD_PATHS)
    table: list[dict[str, Any]] = []
    previous = None
    for n in sorted(snaps):
        row, snap = snaps[n]
        table.append(
            {
                "revision": n,
                "at": row.history_date,
                "actor": row.history_user.get_username() if row.history_user else None,
                "reason": row.history_change_reason or "",
                "changes": _diff(previous, snap, hidden) if previous is not None else [],
            }
        )
        previous = snap
    return table
