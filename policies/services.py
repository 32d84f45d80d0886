"""Role and Dimension checks shared by every operation."""

from __future__ import annotations

from policies.choices import ProfileStatus, Role
from policies.models import Dimension, DimensionMembership, Profile
from policies.refusals import Refusal


def roles_of(user, dimension: Dimension) -> set[str]:
    if user is None or not getattr(user, "is_authenticated", False):
        return set()
    cache = getattr(user, "_dimension_roles", None)
    if cache is None:
        cache = {}
        user._dimension_roles = cache
    if dimension.pk not in cache:
        cache[dimension.pk] = set(
            DimensionMembership.objects.filter(user=user, dimension=dimension).values_list(
                "role", flat=True
            )
        )
    return cache[dimension.pk]


def dimensions_with_roles(user) -> list[Dimension]:
    """Every Dimension the user holds a role in, loading their roles in one query
    (and priming `roles_of`, so no per-Dimension query follows)."""
    if user is None or not getattr(user, "is_authenticated", False):
        return []
    cache: dict = {}
    dimensions: dict[int, Dimension] = {}
    for membership in DimensionMembership.objects.filter(user=user).select_related("dimension"):
        dimensions[membership.dimension_id] = membership.dimension
        cache.setdefault(membership.dimension_id, set()).add(membership.role)
    user._dimension_roles = cache
    return list(dimensions.values())


def require_role(user, dimension: Dimension, *roles: Role) -> None:
    """Refuse with `role_required` unless the user holds one of `roles` in the Dimension."""
    if not roles_of(user, dimension) & {str(r) for r in roles}:
        names = " or ".join(str(r) for r in roles)
        raise Refusal("role_required", f"this operation needs the {names} role in the Dimension.")


def require_role_anywhere(user, *roles: Role) -> None:
    """For operations not bound to one Dimension (evidence import)."""
    if user is None or not getattr(user, "is_authenticated", False):
        raise Refusal("role_required", "authentication is required.")
    held = DimensionMembership.objects.filter(
        user=user, role__in=[str(r) for r in roles], dimension__is_active=True
    ).exists()
    if not held:
        names = " or ".join(str(r) for r in roles)
        raise Refusal("role_required", f"this operation needs the {names} role in a Dimension.")


def require_active(dimension: Dimension) -> None:
    if not dimension.is_active:
        raise Refusal("dimension_inactive", "the Dimension's policy package is not active.")


def require_published(profile: Profile, *, allow_retired: bool = False) -> None:
    allowed = {ProfileStatus.PUBLISHED} | ({ProfileStatus.RETIRED} if allow_retired else set())
    if profile.status not in allowed:
        raise Refusal(
            "profile_not_published", f"profile {profile.ref} is {profile.status}, not published."
        )
