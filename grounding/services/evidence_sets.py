"""Evidence sets: explicit groups of links with roles. A set is its own aggregate
with its own revision; its assessment is never copied to the members, a missing or
withdrawn premise makes it incomplete, and a count of citations is not
independence (dependence_ref records common origin)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from common.kernel.identifiers import parse_uuid
from common.kernel.refusals import Offender, Refusal
from common.kernel.text import control_offenders
from grounding import bodies
from grounding.choices import MembershipRole, RecordState
from grounding.models import EvidenceSet, EvidenceSetMembership, GroundingLink
from grounding.selectors import evidence_set_of
from grounding.services import inputs
from grounding.services._common import (
    refusal_context,
    refuse_invalid,
    require_not_withdrawn,
    save_revision,
    save_tracked,
)
from grounding.services.input_rules import value_size_offenders
from grounding.services.inputs import validate_group
from policies import audit
from policies.actions import composable
from policies.choices import Role
from policies.models import Dimension
from policies.operations import Operation, Param
from policies.services import named_dimension, require_active, require_role


@composable
def do_create_evidence_set(*, actor, values: dict[str, Any]) -> EvidenceSet:
    offenders = _validate_shape(values)
    refuse_invalid(offenders)
    dimension = named_dimension(actor, values["dimension"])
    require_active(dimension)
    require_role(actor, dimension, *CREATE_EVIDENCE_SET.roles)
    # Refs are unique per Dimension: another Dimension's set of this ref is no conflict.
    if EvidenceSet.objects.filter(
        dimension=dimension, evidence_set_ref=values["evidence_set_ref"]
    ).exists():
        raise Refusal(
            "evidence_set_exists", "an evidence set with this ref exists in the Dimension."
        )
    members = _resolve_members(dimension, values.get("members") or [], "/members")
    _lock_members([link for link, _ in members])
    evidence_set = EvidenceSet(
        evidence_set_ref=values["evidence_set_ref"],
        dimension=dimension,
        combination_rule_ref=values.get("combination_rule_ref") or "",
        dependence_ref=values.get("dependence_ref") or "",
        declared_missing_members=values.get("declared_missing_members") or [],
        created_by=actor,
    )
    save_tracked(evidence_set, actor=actor, reason="evidence set created")
    for link, role in members:
        save_tracked(
            EvidenceSetMembership(
                evidence_set=evidence_set,
                link=link,
                membership_role=role,
                added_in_set_revision=1,
            ),
            actor=actor,
            reason="member added",
        )
    touched = _bump_members(
        [link for link, _ in members], actor=actor, set_ref=values["evidence_set_ref"]
    )
    audit.record(
        actor=actor,
        action=CREATE_EVIDENCE_SET.action,
        dimension=dimension,
        resulting_revision=1,
        references={"evidence_set_ref": evidence_set.evidence_set_ref, "links": touched},
    )
    return evidence_set


@composable
def do_change_evidence_set(
    *,
    actor,
    evidence_set_ref: str,
    expected_revision: int,
    add: list[dict[str, Any]] | None = None,
    remove: list[str] | None = None,
    set_assessment_ref: str | None = None,
    declared_missing_members: list[str] | None = None,
    dimension: str | None = None,
) -> EvidenceSet:
    """Change the actor's set of this ref (in the Dimension named `dimension`, needed
    only when sets of several of the actor's Dimensions have the ref)."""
    evidence_set = evidence_set_of(
        evidence_set_ref, actor=actor, dimension=dimension, for_update=True
    )
    require_active(evidence_set.dimension)
    roles = (Role.REVIEWER,) if set_assessment_ref is not None else CHANGE_EVIDENCE_SET.roles
    require_role(actor, evidence_set.dimension, *roles)
    if expected_revision != evidence_set.revision:
        raise Refusal(
            "revision_mismatch",
            f"the evidence set is at revision {evidence_set.revision}.",
            extra={"current_revision": evidence_set.revision},
        )
    new_revision = evidence_set.revision + 1
    added = _resolve_members(evidence_set.dimension, add or [], "/add")
    # Only the set's own Dimension's links: another tenant's link id is not a member,
    # and none of its state (withdrawn, disposed) is read.
    removed_links = list(
        GroundingLink.objects.filter(
            pk__in=[parse_uuid(g) for g in remove or []], dimension=evidence_set.dimension
        )
    )
    _lock_members([link for link, _ in added] + removed_links)
    for link, role in added:
        if evidence_set.memberships.filter(
            link=link, removed_in_set_revision__isnull=True
        ).exists():
            raise Refusal("member_exists", "the link is already a member of the set.")
        save_tracked(
            EvidenceSetMembership(
                evidence_set=evidence_set,
                link=link,
                membership_role=role,
                added_in_set_revision=new_revision,
            ),
            actor=actor,
            reason="member added",
        )
    for grounding_id in remove or []:
        membership = evidence_set.memberships.filter(
            link_id=grounding_id, removed_in_set_revision__isnull=True
        ).first()
        if membership is None:
            raise Refusal("not_a_member", "the link is not a member of the set.")
        membership.removed_in_set_revision = new_revision
        save_tracked(membership, actor=actor, reason="member removed")
    if set_assessment_ref is not None:
        # The set's own assessment, for exactly this set revision; members keep theirs.
        evidence_set.set_assessment_ref = set_assessment_ref
        evidence_set.set_assessment_revision = evidence_set.revision
    if declared_missing_members is not None:
        evidence_set.declared_missing_members = declared_missing_members
    evidence_set.revision = new_revision
    save_tracked(evidence_set, actor=actor, reason="evidence set changed")
    touched = _bump_members(
        [link for link, _ in added] + removed_links,
        actor=actor,
        set_ref=evidence_set.evidence_set_ref,
    )
    audit.record(
        actor=actor,
        action=CHANGE_EVIDENCE_SET.action,
        dimension=evidence_set.dimension,
        expected_revision=expected_revision,
        resulting_revision=new_revision,
        references={"evidence_set_ref": evidence_set.evidence_set_ref, "links": touched},
    )
    return evidence_set


CREATE_EVIDENCE_SET = Operation(
    "create_evidence_set",
    body=do_create_evidence_set,
    input=bodies.EvidenceSetCreateSerializer,
    output="grounding.api.serializers.EvidenceSetSerializer",
    roles=(Role.CURATOR,),
    refusals=(
        "validation_error",
        "dimension_inactive",
        "role_required",
        "evidence_set_exists",
        "link_withdrawn",
        "link_disposed",
    ),
    success=(201,),
    headers=("ETag", "Location"),
    summary="Create an evidence set",
    context=refusal_context,
)
# The set a route names by its ref is resolved among the caller's Dimensions.
SET_DIMENSION = Param(
    "dimension",
    description="The Dimension of the set, needed only when sets of several of your "
    "Dimensions have this ref (otherwise 400 dimension_required).",
)
# What a change of a set refuses: the set (among the caller's Dimensions), its
# Dimension, the role, the revision, a member link's state, the change's values.
SET_REFUSALS = (
    "not_found",
    "dimension_required",
    "dimension_inactive",
    "role_required",
    "revision_mismatch",
    "link_withdrawn",
    "link_disposed",
    "validation_error",
)
CHANGE_EVIDENCE_SET = Operation(
    "change_evidence_set",
    body=do_change_evidence_set,
    output="grounding.api.serializers.EvidenceSetSerializer",
    # A set's own assessment (set_assessment_ref) is a reviewer's.
    roles=(Role.CURATOR,),
    refusals=(*SET_REFUSALS, "member_exists", "not_a_member"),
    headers=("ETag",),
    conditional=True,
    query=(SET_DIMENSION,),
    context=refusal_context,
)
# Its two routes: one member added (by its body), one removed (by the path).
ADD_EVIDENCE_SET_MEMBER = replace(
    CHANGE_EVIDENCE_SET,
    input=bodies.MemberAddSerializer,
    refusals=(*SET_REFUSALS, "member_exists"),
    success=(201,),
    summary="Add a member to an evidence set",
)
REMOVE_EVIDENCE_SET_MEMBER = replace(
    CHANGE_EVIDENCE_SET,
    refusals=(*SET_REFUSALS, "not_a_member"),
    summary="Remove a member from an evidence set",
)
create_evidence_set = CREATE_EVIDENCE_SET.entry
change_evidence_set = CHANGE_EVIDENCE_SET.entry


def _lock_members(links: list[GroundingLink]) -> None:
    """Lock member links in id order (no deadlock between two set operations) and
    refuse withdrawn ones: their aggregate can no longer change."""
    ids = sorted({link.pk for link in links})
    for link in (
        GroundingLink.objects.select_for_update(of=("self",)).filter(pk__in=ids).order_by("pk")
    ):
        require_not_withdrawn(link)


def _bump_members(links: list[GroundingLink], *, actor, set_ref: str) -> list[str]:
    """A membership is bound to the link: each member's revision moves on once."""
    touched = []
    for link in GroundingLink.objects.filter(pk__in={link.pk for link in links}).order_by("pk"):
        save_revision(link, actor=actor, reason=f"evidence set {set_ref} membership changed")
        touched.append(str(link.pk))
    return touched


def missing_members(evidence_set: EvidenceSet) -> list[str]:
    """Declared missing premises plus premises whose link is withdrawn or disposed."""
    withdrawn = [
        f"urn:grounding:{m.link_id}"
        for m in evidence_set.memberships.filter(
            removed_in_set_revision__isnull=True,
            membership_role=MembershipRole.PREMISE,
            link__record_state__in=[RecordState.WITHDRAWN, RecordState.DISPOSED],
        )
    ]
    return list(evidence_set.declared_missing_members) + withdrawn


def is_complete(evidence_set: EvidenceSet) -> bool:
    return not missing_members(evidence_set)


def _validate_shape(values: Any) -> list[Offender]:
    if not isinstance(values, dict):
        return [Offender("", "type", "the body must be an object.")]
    body = inputs.of(CREATE_EVIDENCE_SET)
    offenders = validate_group(
        body, {k: v for k, v in values.items() if k in body.checks}, pointer=""
    )
    offenders += body.unknown(values)
    # The lists' types and items are the compiled checks' (above); members are then
    # resolved by `_resolve_members`. What is left is their size.
    for key in body.lists:
        if isinstance(values.get(key), list):
            offenders += value_size_offenders(values[key], f"/{key}")
    # The ref is a path segment of the set's URL: it must name itself there.
    offenders += control_offenders(values.get("evidence_set_ref"), "/evidence_set_ref")
    return offenders


def _resolve_members(dimension: Dimension, members: list[Any], pointer: str):
    offenders: list[Offender] = []
    resolved = []
    for index, member in enumerate(members):
        where = f"{pointer}/{index}"
        if not isinstance(member, dict):
            offenders.append(Offender(where, "type", "a member is an object."))
            continue
        role = member.get("membership_role")
        if role not in MembershipRole.values:
            offenders.append(
                Offender(f"{where}/membership_role", "enum", "membership_role is not valid.")
            )
        link = GroundingLink.objects.filter(
            pk=parse_uuid(member.get("grounding_id")), dimension=dimension
        ).first()
        if link is None:
            offenders.append(
                Offender(
                    f"{where}/grounding_id",
                    "unknown_reference",
                    "no link of this Dimension has this id.",
                )
            )
            continue
        resolved.append((link, role))
    refuse_invalid(offenders)
    return resolved
