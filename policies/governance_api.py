"""Who may govern what, for the policy endpoints of the REST API.

Thin additions over `policies.governance`: the role each request needs, lookups by
the references clients use, and Django validation errors as typed refusals.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from policies import governance
from policies.actions import composable, public_entry
from policies.choices import Role
from policies.kernel.refusals import Offender, Refusal, pointer_join
from policies.kernel.text import control_offenders
from policies.memberships import memberships
from policies.models import Dimension, DimensionMembership, DisclosureDecision, Profile
from policies.services import named_dimension, require_role

# Who may read a Dimension's disclosure decisions.
DECISION_READERS = (Role.ACCESS_STEWARD, Role.STEWARD)


def _is_superuser(actor) -> bool:
    return bool(getattr(actor, "is_superuser", False))


def require_steward_anywhere(actor) -> None:
    """Dimensions and profiles are created by a steward of some Dimension or a superuser."""
    if _is_superuser(actor):
        return
    if not memberships(actor).holding(Role.STEWARD):
        raise Refusal("role_required", "this operation needs the steward role in a Dimension.")


def require_any_role(actor) -> None:
    if _is_superuser(actor):
        return
    if not memberships(actor).holding():
        raise Refusal("role_required", "this operation needs a role in some Dimension.")


def _validation_refusal(error: ValidationError) -> Refusal:
    # The messages of model validation may quote the value; only codes are kept.
    offenders = []
    # A field-keyed error has no error_list (and a plain one no error_dict): the
    # default of getattr() would be evaluated, and fail, for every field-keyed one.
    by_field = error.error_dict if hasattr(error, "error_dict") else {"": error.error_list}
    for field, errors in by_field.items():
        where = "" if field in ("", "__all__") else pointer_join("", field)
        offenders += [
            Offender(where, e.code or "invalid", "the value is not valid.") for e in errors
        ]
    return Refusal("validation_error", "the request is not valid.", offenders=offenders)


@composable
def do_create_dimension(*, actor, values: dict[str, Any]) -> Dimension:
    """A new Dimension; its creator becomes its steward so it can be governed at all."""
    require_steward_anywhere(actor)
    try:
        dimension = governance.do_create_dimension(actor=actor, values=values)
    except ValidationError as error:
        raise _validation_refusal(error) from None
    governance.do_grant_role(actor=actor, dimension=dimension, user=actor, role=Role.STEWARD)
    return dimension


create_dimension = public_entry("create_dimension", do_create_dimension, screen=None)


def dimensions_for(actor) -> QuerySet[Dimension]:
    if _is_superuser(actor):
        return Dimension.objects.all()
    return Dimension.objects.filter(memberships__user=actor).distinct()


def create_profile(*, actor, values: dict[str, Any]) -> Profile:
    require_steward_anywhere(actor)
    try:
        return governance.create_profile(actor=actor, values=values)
    except ValidationError as error:
        raise _validation_refusal(error) from None


def get_profile(ref: str) -> Profile:
    profile = Profile.by_ref(ref)
    if profile is None:
        raise Refusal("not_found", "no profile has this name@version.")
    return profile


def publish_profile(*, actor, ref: str) -> Profile:
    require_steward_anywhere(actor)
    return governance.publish_profile(actor=actor, profile=get_profile(ref))


def get_dimension(name: Any, *, actor) -> Dimension:
    """The Dimension a body names, for a caller holding a role in it."""
    if _is_superuser(actor):
        dimension = Dimension.objects.filter(name=name).first() if isinstance(name, str) else None
        if dimension is not None:
            return dimension
    return named_dimension(actor, name)


def decisions_for(actor) -> QuerySet[DisclosureDecision]:
    """Decisions of the Dimensions where the actor is an (access) steward."""
    qs = DisclosureDecision.objects.select_related("dimension")
    if _is_superuser(actor):
        return qs
    dimensions = DimensionMembership.objects.filter(
        user=actor, role__in=[str(r) for r in DECISION_READERS]
    ).values("dimension_id")
    return qs.filter(dimension_id__in=dimensions)


def get_decision(*, actor, key: str) -> DisclosureDecision:
    """By decision_ref, or by numeric id; readable by the Dimension's stewards."""
    qs = DisclosureDecision.objects.select_related("dimension")
    # A key with control characters (U+0000 cannot even be sent to PostgreSQL) or dot
    # segments names no decision: recording refuses such refs.
    if control_offenders(key, "/decision_ref"):
        raise Refusal("not_found", "no disclosure decision has this reference.")
    decision = qs.filter(decision_ref=key).first()
    if decision is None and key.isdigit() and len(key) < 19:
        decision = qs.filter(pk=int(key)).first()
    if decision is None:
        raise Refusal("not_found", "no disclosure decision has this reference.")
    if not _is_superuser(actor):
        require_role(actor, decision.dimension, *DECISION_READERS)
    return decision


def revoke_decision(*, actor, key: str, reason: str = "") -> DisclosureDecision:
    decision = get_decision(actor=actor, key=key)
    governance.revoke_disclosure_decision(actor=actor, decision=decision, reason=reason)
    return decision
