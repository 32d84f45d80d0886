"""Who may govern what, for the policy endpoints of the REST API.

Thin additions over `policies.governance`: the role each request needs, lookups by
the references clients use, and Django validation errors as typed refusals; and the
operations the API serves (`CREATE_DIMENSION`, `CREATE_PROFILE`, `PUBLISH_PROFILE`,
`RECORD_DISCLOSURE_DECISION`, `REVOKE_DISCLOSURE_DECISION`): the governance
operations with their request, answer and refusals declared (policies.operations).
Their serializers are the API's (policies.api.serializers), named by path.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet

from common.kernel.refusals import Offender, Refusal, pointer_join
from common.kernel.text import control_offenders
from policies import governance
from policies.actions import composable
from policies.choices import Role
from policies.memberships import memberships
from policies.models import Dimension, DimensionMembership, DisclosureDecision, Profile
from policies.operations import Param
from policies.services import any_dimension_named, named_dimension, require_role

# Who may read a Dimension's disclosure decisions.
DECISION_READERS = (Role.ACCESS_STEWARD, Role.STEWARD)


def _is_superuser(actor) -> bool:
    return bool(getattr(actor, "is_superuser", False))


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
    """A new Dimension (operators only); its creator becomes its steward, so it can be
    governed from the API at once."""
    try:
        dimension = governance.do_create_dimension(actor=actor, values=values)
    except ValidationError as error:
        raise _validation_refusal(error) from None
    governance.do_grant_role(actor=actor, dimension=dimension, user=actor, role=Role.STEWARD)
    return dimension


_SERIALIZERS = "policies.api.serializers"
CREATE_DIMENSION = replace(
    governance.CREATE_DIMENSION,
    body=do_create_dimension,
    input=f"{_SERIALIZERS}.DimensionInputSerializer",
    output=f"{_SERIALIZERS}.DimensionSerializer",
    refusals=("operator_required", "validation_error"),
    success=(201,),
    summary="Create a Dimension (operators: superusers); anyone else 403 operator_required",
)
create_dimension = CREATE_DIMENSION.entry


def dimensions_for(actor) -> QuerySet[Dimension]:
    if _is_superuser(actor):
        return Dimension.objects.all()
    return Dimension.objects.filter(memberships__user=actor).distinct()


def _own_dimension_ids(actor) -> list[int]:
    return [d.pk for d in memberships(actor).holding()]


def profiles_for(actor) -> QuerySet[Profile]:
    """The profiles the actor may see: the shared ones and those of the Dimensions it
    holds a role in (operators: every one). Another Dimension's are not listed."""
    qs = Profile.objects.select_related("dimension")
    if _is_superuser(actor):
        return qs
    return qs.filter(Q(dimension__isnull=True) | Q(dimension_id__in=_own_dimension_ids(actor)))


def create_profile(*, actor, values: dict[str, Any]) -> Profile:
    """A draft of the named Dimension (its stewards) or, with none, a shared one
    (operators)."""
    name = values.pop("dimension", None)
    dimension = get_dimension(name, actor=actor) if name is not None else None
    try:
        return governance.create_profile(actor=actor, values=values, dimension=dimension)
    except ValidationError as error:
        raise _validation_refusal(error) from None


def _scope_dimension(actor, name: str | None) -> Dimension | None:
    """The Dimension a `?dimension=` names, among the actor's (operators: any); one it
    holds no role in answers as an unknown one: `not_found`, as for the resource."""
    if name is None:
        return None
    # Operators look among all; anyone else among the Dimensions their memberships
    # loaded (no query of its own).
    found = any_dimension_named(name) if _is_superuser(actor) else memberships(actor).named(name)
    if found is None:
        raise Refusal("not_found", "nothing of yours has this reference.")
    return found


def _one(found: list, what: str):
    """The one resource a ref names among the actor's; several (the same ref in two of
    its Dimensions) must be told apart with `?dimension=`."""
    if not found:
        raise Refusal("not_found", f"no {what} of yours has this reference.")
    if len(found) > 1:
        raise Refusal(
            "dimension_required",
            f"name the Dimension (?dimension=): this {what} reference is recorded in "
            "several of your Dimensions.",
        )
    return found[0]


def get_profile(ref: str, *, actor, dimension: str | None = None) -> Profile:
    """The profile `name@version` names among the actor's (`profiles_for`), within the
    named Dimension (shared or its own) if one is named."""
    if control_offenders(ref, "/ref"):
        # Names no profile (name and version are slugs), and U+0000 cannot even be
        # sent to PostgreSQL.
        raise Refusal("not_found", "no profile of yours has this reference.")
    name, _, version = ref.partition("@")
    qs = profiles_for(actor).filter(name=name, version=version)
    scope = _scope_dimension(actor, dimension)
    if scope is not None:
        qs = qs.filter(Q(dimension__isnull=True) | Q(dimension=scope))
    return _one(list(qs.order_by("id")[:2]), "profile")


def publish_profile(*, actor, ref: str, dimension: str | None = None) -> Profile:
    profile = get_profile(ref, actor=actor, dimension=dimension)
    return governance.publish_profile(actor=actor, profile=profile)


def get_dimension(name: Any, *, actor) -> Dimension:
    """The Dimension a body names, for a caller holding a role in it."""
    if _is_superuser(actor):
        dimension = any_dimension_named(name)
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


def get_decision(*, actor, key: str, dimension: str | None = None) -> DisclosureDecision:
    """By decision_ref, or by numeric id, among the decisions of the actor's Dimensions
    (and of the one `dimension` names, if given); readable by their stewards.

    A decision_ref names a decision within its Dimension: another Dimension's is never
    looked at, so it answers exactly as a ref that names nothing.
    """
    # A key with control characters (U+0000 cannot even be sent to PostgreSQL) or dot
    # segments names no decision: recording refuses such refs.
    if control_offenders(key, "/decision_ref"):
        raise Refusal("not_found", "no disclosure decision has this reference.")
    qs = DisclosureDecision.objects.select_related("dimension")
    if not _is_superuser(actor):
        qs = qs.filter(dimension_id__in=_own_dimension_ids(actor))
    scope = _scope_dimension(actor, dimension)
    if scope is not None:
        qs = qs.filter(dimension=scope)
    found = list(qs.filter(decision_ref=key).order_by("id")[:2])
    # isdigit() admits Unicode digits ("²", "٣"), which int() refuses or reads as
    # another number: only ASCII digits are an id.
    if not found and key.isascii() and key.isdigit() and len(key) < 19:
        found = list(qs.filter(pk=int(key)))
    decision = _one(found, "disclosure decision")
    if not _is_superuser(actor):
        require_role(actor, decision.dimension, *DECISION_READERS)
    return decision


def revoke_decision(
    *, actor, key: str, reason: str = "", dimension: str | None = None
) -> DisclosureDecision:
    decision = get_decision(actor=actor, key=key, dimension=dimension)
    governance.revoke_disclosure_decision(actor=actor, decision=decision, reason=reason)
    return decision


def record_decision(*, actor, values: dict[str, Any]) -> DisclosureDecision:
    """A decision of the Dimension the (validated) values name, among the actor's."""
    values = dict(values)
    dimension = get_dimension(values.pop("dimension"), actor=actor)
    return governance.record_disclosure_decision(actor=actor, dimension=dimension, values=values)


# The same ref may name a resource in several of the caller's Dimensions.
DIMENSION_SCOPE = Param(
    "dimension",
    description="The Dimension whose resource the ref names; needed only when the ref "
    "names one in several of your Dimensions (else 400 dimension_required).",
)
CREATE_PROFILE = replace(
    governance.CREATE_PROFILE,
    run=create_profile,
    input=f"{_SERIALIZERS}.ProfileInputSerializer",
    output=f"{_SERIALIZERS}.ProfileSerializer",
    refusals=("validation_error", "operator_required", "role_required"),
    success=(201,),
    summary="Draft a profile of a Dimension (its steward) or a shared one (operators)",
)
PUBLISH_PROFILE = replace(
    governance.PUBLISH_PROFILE,
    run=publish_profile,
    output=f"{_SERIALIZERS}.ProfileSerializer",
    refusals=(
        "not_found",
        "dimension_required",
        "operator_required",
        "role_required",
        "profile_not_draft",
    ),
    query=(DIMENSION_SCOPE,),
    summary="Publish (pin) a draft profile (its Dimension's steward; shared: operators)",
)
RECORD_DISCLOSURE_DECISION = replace(
    governance.RECORD_DISCLOSURE_DECISION,
    run=record_decision,
    input=f"{_SERIALIZERS}.DecisionInputSerializer",
    output=f"{_SERIALIZERS}.DecisionSerializer",
    refusals=("validation_error", "role_required", "decision_exists"),
    success=(201,),
    summary="Record a disclosure decision (access_steward of the Dimension)",
)
REVOKE_DISCLOSURE_DECISION = replace(
    governance.REVOKE_DISCLOSURE_DECISION,
    run=revoke_decision,
    refusals=("not_found", "dimension_required", "role_required", "decision_revoked"),
    success=(204,),
    query=(
        # Kept to its first 1,000 characters (DisclosureDecision.revocation_reason).
        Param("reason"),
        DIMENSION_SCOPE,
    ),
    summary="Revoke a disclosure decision",
)
