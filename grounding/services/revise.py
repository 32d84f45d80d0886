"""revise: a new revision of bindings or interpretation, with reason and authority.

Endpoint bindings are immutable rows: a changed statement, passage or anchor makes a
new row naming its predecessor. Changing an endpoint, the anchor or the support
interpretation moves the basis on, so earlier assessments stop counting (stale)
until a reviewer reassesses the new inputs. Never edits passage or answer masters.
"""

from __future__ import annotations

from typing import Any

from common.kernel.refusals import Offender, Refusal
from grounding import bodies
from grounding.choices import RecheckState, ResolutionState
from grounding.models import GroundingLink, PassageBinding, StatementBinding
from grounding.services import input_rules, inputs
from grounding.services._common import (
    OPEN_LINK_REFUSALS,
    open_link,
    refresh_display,
    refusal_context,
    refuse_invalid,
    save_revision,
    save_tracked,
)
from grounding.services.passages import Lookups, resolve_passage
from grounding.values.timestamps import parse_rfc3339
from policies import audit
from policies.actions import composable
from policies.choices import Role
from policies.operations import Operation

# A curator may admit a candidate (or take admission back) and ask for a recheck;
# withdrawal and disposal have operations of their own.
CURATOR_RECORD_STATES = set(inputs.REVISE.choices("record_state"))
CURATOR_RECHECK_STATES = set(inputs.REVISE.choices("recheck_state"))
# The groups a revision merges into the link's (the passage is resolved on its own).
_GROUPS = (inputs.STATEMENT, inputs.ANCHOR, inputs.SUPPORT, inputs.TIME, inputs.DISCLOSURE)
SUPPORT_BASIS_FIELDS = ("support_kind", "support_scope", "support_limits")


@composable
def do_revise(
    *, actor, grounding_id, expected_revision: int, changes: dict[str, Any]
) -> GroundingLink:
    link = open_link(
        grounding_id, actor=actor, roles=REVISE.roles, expected_revision=expected_revision
    )

    if not isinstance(changes, dict):
        refuse_invalid([Offender("", "type", "the body must be an object.")])
    offenders = _validate(link, changes)
    refuse_invalid(offenders)
    reason = changes["revision_reason"].strip()
    old_revision = link.revision
    new_revision = old_revision + 1
    basis_changed = False
    touched: list[str] = []

    if "statement" in changes:
        statement = _new_statement(link, changes["statement"], new_revision)
        if statement is not None:
            save_tracked(statement, actor=actor, reason=reason)
            link.current_statement = statement
            basis_changed = True
            touched.append("statement")
    if "passage" in changes or "anchor" in changes:
        binding = _new_passage_binding(link, changes, new_revision)
        if binding is not None:
            save_tracked(binding, actor=actor, reason=reason)
            link.current_passage = binding
            # A new endpoint or selector has not been resolved yet.
            link.current_anchor_observation = None
            link.resolution_state = ResolutionState.UNATTEMPTED
            basis_changed = True
            touched.append("passage/anchor")
    touched += _apply_link_fields(link, changes)
    if any(f"support.{name}" in touched for name in SUPPORT_BASIS_FIELDS):
        basis_changed = True
    if not touched:
        raise Refusal("no_change", "the revision changes nothing on the link.")

    if basis_changed:
        link.basis_revision = new_revision
        link.support_verdict_ref = ""
        if link.assessments.exists():
            link.recheck_state = RecheckState.STALE
    link.predecessor_ref = f"urn:grounding:{link.grounding_id}@{old_revision}"
    link.revision_reason = reason
    refresh_display(link)
    save_revision(link, actor=actor, reason=reason)
    audit.record(
        actor=actor,
        action=REVISE.action,
        grounding_id=link.grounding_id,
        dimension=link.dimension,
        expected_revision=expected_revision,
        resulting_revision=link.revision,
        references={"changed": sorted(set(touched)), "basis_changed": basis_changed},
    )
    return link


REVISE = Operation(
    "revise",
    body=do_revise,
    input=bodies.ReviseSerializer,
    output="grounding.api.serializers_link.LinkSerializer",
    roles=(Role.CURATOR,),
    refusals=(*OPEN_LINK_REFUSALS, "no_change"),
    headers=("ETag",),
    conditional=True,
    summary="Revise a link (new bindings or interpretation, with a reason)",
    context=refusal_context,
)
revise = REVISE.entry


def _validate(link: GroundingLink, changes: dict[str, Any]) -> list[Offender]:
    body = inputs.of(REVISE)
    offenders = body.unknown(changes)
    reason = changes.get("revision_reason")
    if not isinstance(reason, str) or not reason.strip():
        offenders.append(Offender("/revision_reason", "required", "revision_reason is required."))
    profile = link.profile
    for group in _GROUPS:
        if group.name in changes:
            offenders += inputs.validate_group(
                group, changes[group.name], profile=profile, partial=True
            )
    for group in _GROUPS:
        values = changes.get(group.name)
        if isinstance(values, dict):
            offenders += [
                Offender(f"/{group.name}/{key}", "required", f"{key} cannot be removed.")
                for key in group.required
                if key in values and values[key] in (None, "")
            ]
    if isinstance(changes.get("support"), dict):
        merged = {
            "use_basis": link.use_basis,
            "generation_evidence_ref": link.generation_evidence_ref,
            **changes["support"],
        }
        offenders += input_rules.check_use_basis(merged)
    offenders += input_rules.check_profile_vocabulary(
        profile=profile,
        support=changes.get("support") if isinstance(changes.get("support"), dict) else None,
        anchor=changes.get("anchor") if isinstance(changes.get("anchor"), dict) else None,
    )
    if "record_state" in changes and changes["record_state"] not in CURATOR_RECORD_STATES:
        offenders.append(
            Offender(
                "/record_state",
                "enum",
                "a revision may set record_state to candidate or admitted only.",
            )
        )
    if "recheck_state" in changes and changes["recheck_state"] not in CURATOR_RECHECK_STATES:
        offenders.append(
            Offender(
                "/recheck_state",
                "enum",
                "a revision may only ask for a recheck (pending_review).",
            )
        )
    if "related_link_refs" in changes:
        offenders += body.check(
            "related_link_refs", changes["related_link_refs"], pointer="/related_link_refs"
        )
    for key in ("change_ref", "owner_ref", "identity_decision"):
        if key in changes and not isinstance(changes[key], str):
            offenders.append(Offender(f"/{key}", "type", f"{key} must be a string."))
        elif key in changes:
            offenders += body.strings(changes, (key,), pointer="")
    if isinstance(changes.get("owner_ref"), str) and not changes["owner_ref"].strip():
        offenders.append(Offender("/owner_ref", "required", "owner_ref cannot be empty."))
    return offenders


def _new_statement(link, values: dict, revision: int) -> StatementBinding | None:
    old = link.current_statement
    fields = {
        name: getattr(old, name)
        for name in inputs.STATEMENT.names
        if name not in ("finalization_binding",)
    }
    fields["finalization_binding"] = old.finalization_binding
    merged = {**fields, **{k: v for k, v in values.items() if v is not None}}
    if all(merged[k] == getattr(old, k) for k in merged):
        return None
    return StatementBinding(link=link, predecessor=old, bound_in_revision=revision, **merged)


def _new_passage_binding(link, changes: dict, revision: int) -> PassageBinding | None:
    old = link.current_passage
    merged = {
        "passage": old.passage,
        "passage_ref": old.passage_ref,
        "source_revision_binding": old.source_revision_binding,
        "retrieval_observation_ref": old.retrieval_observation_ref,
        "representation_check": old.representation_check,
        "source_selector": old.source_selector,
        "selector_profile": old.selector_profile,
        "context_ref": old.context_ref,
        "transformation_ref": old.transformation_ref,
    }
    if "passage" in changes:
        offenders: list[Offender] = []
        values, passage = resolve_passage(
            changes["passage"], "/passage", Lookups(), offenders, dimension=link.dimension
        )
        refuse_invalid(offenders)
        merged.update({k: v for k, v in values.items() if k != "passage_id"})
        merged["passage"] = passage
    for key, value in (changes.get("anchor") or {}).items():
        merged[key] = value if value is not None else ""
    if all(merged[k] == getattr(old, k) for k in merged):
        return None
    return PassageBinding(link=link, predecessor=old, bound_in_revision=revision, **merged)


def _apply_link_fields(link: GroundingLink, changes: dict) -> list[str]:
    touched = []

    def assign(name: str, value: Any, label: str) -> None:
        if getattr(link, name) != value:
            setattr(link, name, value)
            touched.append(label)

    for key, value in (changes.get("support") or {}).items():
        assign(key, value if value is not None or key == "support_limits" else "", f"support.{key}")
    time_values = changes.get("time") or {}
    for key, value in time_values.items():
        if key in ("asserted_at", "review_due"):
            value = parse_rfc3339(value) if value else None
        elif key == "statement_time_ref":
            value = value or ""
        assign(key, value, f"time.{key}")
    for key, value in (changes.get("disclosure") or {}).items():
        assign(key, value if value is not None else "", f"disclosure.{key}")
    for key in ("owner_ref", "record_state", "recheck_state", "change_ref", "identity_decision"):
        if key in changes:
            assign(key, changes[key], key)
    if "related_link_refs" in changes:
        assign("related_link_refs", changes["related_link_refs"], "related_link_refs")
    return touched
