"""Policy owners' operations: Dimensions, memberships, profiles and disclosure
decisions. Each writes its audit event in the same transaction.

Each is a body `do_<name>` and its public entry `<name>` (policies.actions). Their
input comes from serializers, commands and the admin, and model validation
(`full_clean`) judges it, so the entries screen nothing themselves.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from policies import audit
from policies.actions import composable, public_entry
from policies.choices import ProfileStatus, Role
from policies.disclosure import ALL_FIELDS, record_internal_decisions
from policies.kernel.refusals import Offender, Refusal
from policies.kernel.text import control_offenders
from policies.memberships import forget_memberships
from policies.models import Dimension, DimensionMembership, DisclosureDecision, Profile
from policies.services import require_role


def _save(obj, *, actor, reason: str) -> None:
    obj._history_user = actor if getattr(actor, "pk", None) else None
    obj._change_reason = reason
    obj.save()


@composable
def do_create_dimension(*, actor, values: dict[str, Any]) -> Dimension:
    """A new Dimension, with the disclosure decisions its own staff need to work."""
    dimension = Dimension(**values)
    dimension.full_clean()
    _save(dimension, actor=actor, reason="dimension created")
    record_internal_decisions(dimension)
    audit.record(actor=actor, action="create_dimension", dimension=dimension)
    return dimension


@composable
def do_grant_role(*, actor, dimension: Dimension, user, role: Role) -> DimensionMembership:
    membership = DimensionMembership.objects.filter(
        dimension=dimension, user=user, role=role
    ).first()
    if membership is None:
        membership = DimensionMembership(dimension=dimension, user=user, role=role)
        _save(membership, actor=actor, reason=f"granted {role}")
        audit.record(
            actor=actor,
            action="grant_role",
            dimension=dimension,
            references={"user": user.get_username(), "role": str(role)},
        )
        forget_memberships(user)
    return membership


@composable
def do_revoke_role(*, actor, dimension: Dimension, user, role: Role) -> bool:
    """Remove the membership (its history keeps who held it); False if none was held."""
    membership = DimensionMembership.objects.filter(
        dimension=dimension, user=user, role=role
    ).first()
    if membership is None:
        return False
    membership._history_user = actor if getattr(actor, "pk", None) else None
    membership._change_reason = f"revoked {role}"
    membership.delete()
    forget_memberships(user)
    audit.record(
        actor=actor,
        action="revoke_role",
        dimension=dimension,
        references={"user": user.get_username(), "role": str(role)},
    )
    return True


@composable
def do_create_profile(*, actor, values: dict[str, Any]) -> Profile:
    profile = Profile(**{**values, "status": ProfileStatus.DRAFT})
    profile.full_clean()
    _save(profile, actor=actor, reason="profile drafted")
    audit.record(actor=actor, action="create_profile", references={"profile": profile.ref})
    return profile


@composable
def do_publish_profile(*, actor, profile: Profile) -> Profile:
    """Publishing pins the profile: its content can never change afterwards."""
    if profile.status != ProfileStatus.DRAFT:
        raise Refusal("profile_not_draft", f"profile {profile.ref} is {profile.status}.")
    profile.status = ProfileStatus.PUBLISHED
    profile.published_at = timezone.now()
    _save(profile, actor=actor, reason="profile published")
    audit.record(actor=actor, action="publish_profile", references={"profile": profile.ref})
    return profile


@composable
def do_retire_profile(*, actor, profile: Profile) -> Profile:
    if profile.status != ProfileStatus.PUBLISHED:
        raise Refusal("profile_not_published", f"profile {profile.ref} is {profile.status}.")
    profile.status = ProfileStatus.RETIRED
    profile.retired_at = timezone.now()
    _save(profile, actor=actor, reason="profile retired")
    audit.record(actor=actor, action="retire_profile", references={"profile": profile.ref})
    return profile


@composable
def do_record_disclosure_decision(
    *, actor, dimension: Dimension, values: dict[str, Any]
) -> DisclosureDecision:
    require_role(actor, dimension, Role.ACCESS_STEWARD)
    # decision_ref is a path segment of the decision's URL: it must name itself there.
    misnamed = control_offenders(values.get("decision_ref"), "/decision_ref")
    if misnamed:
        raise Refusal("validation_error", "decision_ref cannot be a URL path.", misnamed)
    unknown = sorted(set(values.get("fields") or []) - ALL_FIELDS)
    if unknown or not values.get("fields"):
        raise Refusal(
            "validation_error",
            "fields must name disclosable fields.",
            offenders=[Offender("/fields", "enum", "fields must name disclosable fields.")],
        )
    if DisclosureDecision.objects.filter(decision_ref=values["decision_ref"]).exists():
        raise Refusal("decision_exists", "a decision with this decision_ref is recorded.")
    decision = DisclosureDecision(dimension=dimension, **values)
    _save(decision, actor=actor, reason="disclosure decision recorded")
    audit.record(
        actor=actor,
        action="record_disclosure_decision",
        dimension=dimension,
        decision_ref=decision.decision_ref,
    )
    return decision


@composable
def do_revoke_disclosure_decision(*, actor, decision: DisclosureDecision, reason: str = "") -> None:
    """Revocation suppresses current display; past assessments and history stay as they were."""
    require_role(actor, decision.dimension, Role.ACCESS_STEWARD)
    if decision.revoked_at is not None:
        raise Refusal("decision_revoked", "the decision is already revoked.")
    decision.revoked_at = timezone.now()
    decision.revocation_reason = reason
    _save(decision, actor=actor, reason="disclosure decision revoked")
    audit.record(
        actor=actor,
        action="revoke_disclosure_decision",
        dimension=decision.dimension,
        decision_ref=decision.decision_ref,
    )


create_dimension = public_entry("create_dimension", do_create_dimension, screen=None)
grant_role = public_entry("grant_role", do_grant_role, screen=None)
revoke_role = public_entry("revoke_role", do_revoke_role, screen=None)
create_profile = public_entry("create_profile", do_create_profile, screen=None)
publish_profile = public_entry("publish_profile", do_publish_profile, screen=None)
retire_profile = public_entry("retire_profile", do_retire_profile, screen=None)
record_disclosure_decision = public_entry(
    "record_disclosure_decision", do_record_disclosure_decision, screen=None
)
revoke_disclosure_decision = public_entry(
    "revoke_disclosure_decision", do_revoke_disclosure_decision, screen=None
)
