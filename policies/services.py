"""Role and Dimension checks shared by every operation."""

from __future__ import annotations

from typing import Any

from common.kernel.refusals import Offender, Refusal
from common.kernel.text import plausible_ref
from policies.choices import ProfileStatus, Role
from policies.memberships import memberships
from policies.models import Dimension, Profile


def roles_of(user, dimension: Dimension) -> frozenset[str]:
    """The user's roles in the Dimension (`policies.memberships`: once per request)."""
    return memberships(user).of(dimension.pk)


def dimensions_with_roles(user) -> list[Dimension]:
    """Every Dimension the user holds a role in."""
    return memberships(user).holding()


def require_role(user, dimension: Dimension, *roles: Role) -> None:
    """Refuse with `role_required` unless the user holds one of `roles` in the Dimension.

    Without any role there, the refusal is `not_found`: what belongs to a Dimension
    where the caller holds no role answers as if it did not exist.
    """
    held = roles_of(user, dimension)
    if not held:
        raise Refusal("not_found", "nothing of yours has this reference.")
    if not held & {str(r) for r in roles}:
        names = " or ".join(str(r) for r in roles)
        raise Refusal("role_required", f"this operation needs the {names} role in the Dimension.")


def is_operator(actor) -> bool:
    """An operator: a Django superuser, or the command line and the system (no actor:
    `manage.py` commands, seed_demo)."""
    return actor is None or bool(getattr(actor, "is_superuser", False))


def require_operator(actor) -> None:
    """Refuse with `operator_required` unless the actor is an operator: whatever the
    request names, so the refusal tells nothing of what exists."""
    if not is_operator(actor):
        raise Refusal("operator_required", "this operation is an operator's (a superuser's).")


def require_active(dimension: Dimension) -> None:
    if not dimension.is_active:
        raise Refusal("dimension_inactive", "the Dimension's policy package is not active.")


def require_published(profile: Profile, *, allow_retired: bool = False) -> None:
    allowed = {ProfileStatus.PUBLISHED} | ({ProfileStatus.RETIRED} if allow_retired else set())
    if profile.status not in allowed:
        raise Refusal(
            "profile_not_published", f"profile {profile.ref} is {profile.status}, not published."
        )


def any_dimension_named(name: Any) -> Dimension | None:
    """Any Dimension of this name: the operators' lookup (superusers, the command line).
    Everyone else looks among their own: `memberships(user).named(name)`."""
    return Dimension.objects.filter(name=name).first() if plausible_ref(name, 63) else None


def dimension_for(user, name: Any) -> Dimension:
    """The named Dimension, for a caller who holds some role in it.

    A Dimension where the caller holds no role answers like one that does not exist
    (`not_found`): its existence is not disclosed.
    """
    dimension = memberships(user).named(name)
    if dimension is None:
        raise Refusal("not_found", "no Dimension of yours has this name.")
    return dimension


def unknown_dimension(pointer: str = "/dimension") -> Offender:
    """The one offender for a named Dimension that does not exist or where the caller
    holds no role: the two must not be told apart."""
    return Offender(pointer, "unknown_reference", "no Dimension of yours has this name.")


def named_dimension(user, name: Any, pointer: str = "/dimension") -> Dimension:
    """A Dimension a request body names: unknown, and one where the caller holds no
    role, are the same offender (existence is not disclosed)."""
    dimension = memberships(user).named(name)
    if dimension is None:
        raise Refusal(
            "validation_error",
            "the request is not valid.",
            offenders=[unknown_dimension(pointer)],
        )
    return dimension


def dimension_named_or_only(user, name: Any, role: Role) -> Dimension:
    """The named Dimension (as `dimension_for`), or, when none is named, the one
    Dimension where the caller holds `role`; several or none must be named."""
    if name is not None and name != "":
        return dimension_for(user, name)
    if user is None or not getattr(user, "is_authenticated", False):
        raise Refusal("role_required", "authentication is required.")
    held = [d for d in memberships(user).holding(role) if d.is_active]
    if not held:
        raise Refusal("role_required", f"this operation needs the {role} role in a Dimension.")
    if len(held) > 1:
        raise Refusal(
            "dimension_required",
            f"name the Dimension (?dimension=): you hold the {role} role in several.",
        )
    return held[0]
