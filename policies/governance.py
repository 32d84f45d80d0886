"""Policy owners' operations: Dimensions, memberships, profiles and disclosure
decisions. Each writes its audit event in the same transaction.

Each is a body `do_<name>`, declared as an operation (`CREATE_DIMENSION`, …:
policies.operations), and its public entry `<name>`. Their input comes from
serializers, commands and the admin, and model validation (`full_clean`) judges it,
so the entries screen nothing themselves. The API serves them as
`policies.governance_api` declares (request and answer, refusals).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.utils import timezone

from common.kernel import compat
from common.kernel.refusals import Offender, Refusal
from common.kernel.text import control_offenders
from policies import audit
from policies.actions import composable, dimension_context
from policies.choices import ProfileStatus, Role
from policies.disclosure import ALL_FIELDS, PURPOSE_BY_ROLE
from policies.memberships import forget_memberships
from policies.models import Dimension, DimensionMembership, DisclosureDecision, Profile
from policies.operations import Operation
from policies.services import is_operator, require_operator, require_role, roles_of

# The ref of the decision a Dimension records for each of its internal roles. The same
# in every Dimension (refs are unique per Dimension): it names no Dimension, so it
# confirms none.
INTERNAL_DECISION_REF = "urn:access:internal:{role}"


def _save(obj, *, actor, reason: str) -> None:
    compat.set_history_context(
        obj, user=actor if getattr(actor, "pk", None) else None, reason=reason
    )
    obj.save()


def tenant_context(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The refused event's fields: under the Dimension the operation concerns (named,
    or the profile's or decision's) only when the actor holds a role there; otherwise
    under none, so no one writes into another Dimension's audit trail."""
    context = dimension_context(kwargs)
    dimension = context["dimension"]
    if dimension is None:
        owned = kwargs.get("profile") or kwargs.get("decision")
        dimension = getattr(owned, "dimension", None)
    if isinstance(dimension, Dimension) and not roles_of(context["actor"], dimension):
        dimension = None
    return {**context, "dimension": dimension}


def record_internal_decisions(dimension: Dimension, *, actor=None) -> list[DisclosureDecision]:
    """Decisions a Dimension records for its own staff so they can work.

    They are ordinary decisions: visible, listed and revocable like any other.
    """
    created = []
    for role, purpose in PURPOSE_BY_ROLE.items():
        ref = INTERNAL_DECISION_REF.format(role=role)
        decision = DisclosureDecision.objects.filter(dimension=dimension, decision_ref=ref).first()
        if decision is None:
            decision = DisclosureDecision(
                dimension=dimension,
                decision_ref=ref,
                recipient_scope=f"role:{role}",
                purpose=purpose,
                fields=sorted(ALL_FIELDS),
                internal=True,
                includes_restricted_sources=role
                in (Role.ACCESS_STEWARD, Role.STEWARD, Role.CURATOR),
            )
            _save(decision, actor=actor, reason="internal disclosure decision recorded")
        created.append(decision)
    return created


@composable
def do_create_dimension(*, actor, values: dict[str, Any]) -> Dimension:
    """A new Dimension, with the disclosure decisions its own staff need to work.

    An operator's act (a superuser, or `manage.py create_dimension`): anyone else is
    refused before the values are looked at, so the refusal tells nothing of which
    names are taken.
    """
    require_operator(actor)
    dimension = Dimension(**values)
    dimension.full_clean()
    _save(dimension, actor=actor, reason="dimension created")
    record_internal_decisions(dimension, actor=actor)
    audit.record(actor=actor, action=CREATE_DIMENSION.action, dimension=dimension)
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
            action=GRANT_ROLE.action,
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
    compat.set_history_context(
        membership, user=actor if getattr(actor, "pk", None) else None, reason=f"revoked {role}"
    )
    membership.delete()
    forget_memberships(user)
    audit.record(
        actor=actor,
        action=REVOKE_ROLE.action,
        dimension=dimension,
        references={"user": user.get_username(), "role": str(role)},
    )
    return True


def require_profile_governor(actor, dimension: Dimension | None) -> None:
    """A shared profile (no Dimension) is governed by operators only; a Dimension's
    own by that Dimension's stewards (and operators). Without a role there the
    profile answers as one that does not exist (`not_found`)."""
    if dimension is None:
        require_operator(actor)
    elif not is_operator(actor):
        require_role(actor, dimension, Role.STEWARD)


def _shared_ref_taken(profile: Profile) -> bool:
    """A Dimension's profile may not take a shared profile's name@version, nor a shared
    one any Dimension's: a link names its profile by ref, and one ref must name one
    profile for it. (Shared profiles are listed to everyone, and only operators, who
    see every Dimension, draft them: the refusal discloses nothing.)"""
    others = Profile.objects.filter(name=profile.name, version=profile.version)
    if profile.dimension_id is None:
        return others.filter(dimension__isnull=False).exists()
    return others.filter(dimension__isnull=True).exists()


@composable
def do_create_profile(
    *, actor, values: dict[str, Any], dimension: Dimension | None = None
) -> Profile:
    """A draft profile of `dimension`, or (None) one shared by every Dimension."""
    require_profile_governor(actor, dimension)
    profile = Profile(**{**values, "dimension": dimension, "status": ProfileStatus.DRAFT})
    profile.full_clean()
    if _shared_ref_taken(profile):
        raise ValidationError(
            {NON_FIELD_ERRORS: [ValidationError("a profile has this name@version.", "unique")]}
        )
    _save(profile, actor=actor, reason="profile drafted")
    _audit_profile(actor, CREATE_PROFILE.action, profile)
    return profile


@composable
def do_publish_profile(*, actor, profile: Profile) -> Profile:
    """Publishing pins the profile: its content can never change afterwards."""
    require_profile_governor(actor, profile.dimension)
    if profile.status != ProfileStatus.DRAFT:
        raise Refusal("profile_not_draft", f"profile {profile.ref} is {profile.status}.")
    profile.status = ProfileStatus.PUBLISHED
    profile.published_at = timezone.now()
    _save(profile, actor=actor, reason="profile published")
    _audit_profile(actor, PUBLISH_PROFILE.action, profile)
    return profile


@composable
def do_retire_profile(*, actor, profile: Profile) -> Profile:
    require_profile_governor(actor, profile.dimension)
    if profile.status != ProfileStatus.PUBLISHED:
        raise Refusal("profile_not_published", f"profile {profile.ref} is {profile.status}.")
    profile.status = ProfileStatus.RETIRED
    profile.retired_at = timezone.now()
    _save(profile, actor=actor, reason="profile retired")
    _audit_profile(actor, RETIRE_PROFILE.action, profile)
    return profile


def _audit_profile(actor, action: str, profile: Profile) -> None:
    audit.record(
        actor=actor, action=action, dimension=profile.dimension, references={"profile": profile.ref}
    )


@composable
def do_record_disclosure_decision(
    *, actor, dimension: Dimension, values: dict[str, Any]
) -> DisclosureDecision:
    require_role(actor, dimension, *RECORD_DISCLOSURE_DECISION.roles)
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
    # Unique within the Dimension only: another Dimension's refs are not consulted.
    taken = DisclosureDecision.objects.filter(
        dimension=dimension, decision_ref=values["decision_ref"]
    )
    if taken.exists():
        raise Refusal(
            "decision_exists", "a decision with this decision_ref is recorded in the Dimension."
        )
    decision = DisclosureDecision(dimension=dimension, **values)
    _save(decision, actor=actor, reason="disclosure decision recorded")
    audit.record(
        actor=actor,
        action=RECORD_DISCLOSURE_DECISION.action,
        dimension=dimension,
        decision_ref=decision.decision_ref,
    )
    return decision


@composable
def do_revoke_disclosure_decision(*, actor, decision: DisclosureDecision, reason: str = "") -> None:
    """Revocation suppresses current display; past assessments and history stay as they were."""
    require_role(actor, decision.dimension, *REVOKE_DISCLOSURE_DECISION.roles)
    if decision.revoked_at is not None:
        raise Refusal("decision_revoked", "the decision is already revoked.")
    decision.revoked_at = timezone.now()
    decision.revocation_reason = reason
    _save(decision, actor=actor, reason="disclosure decision revoked")
    audit.record(
        actor=actor,
        action=REVOKE_DISCLOSURE_DECISION.action,
        dimension=decision.dimension,
        decision_ref=decision.decision_ref,
    )


CREATE_DIMENSION = Operation("create_dimension", body=do_create_dimension, screen=None)
GRANT_ROLE = Operation("grant_role", body=do_grant_role, screen=None)
REVOKE_ROLE = Operation("revoke_role", body=do_revoke_role, screen=None)
# A Dimension's own profiles are its stewards' (shared ones: operators').
CREATE_PROFILE = Operation(
    "create_profile",
    body=do_create_profile,
    roles=(Role.STEWARD,),
    context=tenant_context,
    screen=None,
)
PUBLISH_PROFILE = Operation(
    "publish_profile",
    body=do_publish_profile,
    roles=(Role.STEWARD,),
    context=tenant_context,
    screen=None,
)
RETIRE_PROFILE = Operation(
    "retire_profile",
    body=do_retire_profile,
    roles=(Role.STEWARD,),
    context=tenant_context,
    screen=None,
)
RECORD_DISCLOSURE_DECISION = Operation(
    "record_disclosure_decision",
    body=do_record_disclosure_decision,
    roles=(Role.ACCESS_STEWARD,),
    context=tenant_context,
    screen=None,
)
REVOKE_DISCLOSURE_DECISION = Operation(
    "revoke_disclosure_decision",
    body=do_revoke_disclosure_decision,
    roles=(Role.ACCESS_STEWARD,),
    context=tenant_context,
    screen=None,
)
create_dimension = CREATE_DIMENSION.entry
grant_role = GRANT_ROLE.entry
revoke_role = REVOKE_ROLE.entry
create_profile = CREATE_PROFILE.entry
publish_profile = PUBLISH_PROFILE.entry
retire_profile = RETIRE_PROFILE.entry
record_disclosure_decision = RECORD_DISCLOSURE_DECISION.entry
revoke_disclosure_decision = REVOKE_DISCLOSURE_DECISION.entry
