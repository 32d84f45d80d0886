"""A user's roles in each Dimension: the one place they are fetched and kept.

`memberships(user)` loads every membership of the user, with its Dimension, in one
query and keeps the result on the user object (token authentication reads them with
the token, `remember`). Authentication builds that object
anew for every request (session or token), so the roles are fetched once per
request and a role granted or revoked elsewhere takes effect at the next request.
Within one process, `governance.grant_role` and `revoke_role` forget what the user
object they were handed holds, so a grant is seen by the rest of the same request.

The reader (`policies.reader`), `policies.services.require_role` and its siblings,
and the admin's row scoping all ask this; none keeps roles of its own.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model

from common.kernel import reads
from policies.models import Dimension, DimensionMembership

_ATTR = "_grounding_memberships"


@functools.cache
def joined(user_key: str) -> tuple[str, str]:
    """What a statement over users adds to read each user's memberships with it: the
    columns to select and the joins, given the column holding the user's key. Each
    row is a Dimension and one of the user's roles there (one row of NULLs for a
    user holding none), in grant order with `ORDER BY m.id`: what `remember` takes.

    One definition for `memberships` and for token authentication, which reads them
    with the token. As a plain statement it is what a queryset selecting the
    memberships with their Dimensions would read (`test_memberships.py` holds the
    two equal), without compiling one for every request."""
    return (
        f"{reads.columns(Dimension, 'd')}, m.role",
        f"LEFT JOIN {DimensionMembership._meta.db_table} m ON m.user_id = {user_key} "
        f"LEFT JOIN {Dimension._meta.db_table} d ON d.id = m.dimension_id",
    )


@functools.cache
def _memberships_sql() -> str:
    users = get_user_model()._meta
    columns, joins = joined(f"u.{users.pk.column}")
    return (
        f"SELECT {columns} FROM {users.db_table} u {joins} "
        f"WHERE u.{users.pk.column} = %s ORDER BY m.id"
    )


@dataclass(frozen=True)
class Memberships:
    """Roles by Dimension id, and the Dimensions themselves."""

    roles: Mapping[int, frozenset[str]] = field(default_factory=dict)
    dimensions: Mapping[int, Dimension] = field(default_factory=dict)

    def of(self, dimension_id: int | None) -> frozenset[str]:
        """The roles held in one Dimension (none for an unknown or missing id)."""
        return self.roles.get(dimension_id, frozenset())

    def named(self, name: Any) -> Dimension | None:
        """The Dimension of this name where a role is held, else None: the one lookup
        of a Dimension a caller names (no query: the memberships loaded it). One
        without a role of the caller answers as an unknown one."""
        if not isinstance(name, str):
            return None
        for pk, held in self.roles.items():
            if held and self.dimensions[pk].name == name:
                return self.dimensions[pk]
        return None

    def holding(self, *roles: str) -> list[Dimension]:
        """Dimensions where one of `roles` is held (any role if none is given)."""
        wanted = {str(r) for r in roles}
        return [
            self.dimensions[pk]
            for pk, held in self.roles.items()
            if held and (not wanted or held & wanted)
        ]


NONE = Memberships()


def _authenticated(user) -> bool:
    return bool(user is not None and getattr(user, "is_authenticated", False))


def memberships(user) -> Memberships:
    """The user's memberships, fetched on the first call for this user object."""
    if not _authenticated(user):
        return NONE
    cached = getattr(user, _ATTR, None)
    if cached is None:
        cached = remember(user, reads.read(_memberships_sql(), [user.pk], (Dimension,)))
    return cached


def remember(user, found: Iterable[tuple[Dimension | None, str | None]]) -> Memberships:
    """Keep on this user object the memberships read with it, the (Dimension, role)
    pairs of `joined`'s rows, every one the user holds (a pair of NULLs: none):
    token authentication reads them in the token's statement, so a request asks the
    database once for both."""
    held: dict[int, set[str]] = {}
    dimensions: dict[int, Dimension] = {}
    for dimension, role in found:
        if dimension is None:
            continue
        held.setdefault(dimension.pk, set()).add(role)
        dimensions[dimension.pk] = dimension
    kept = Memberships({k: frozenset(v) for k, v in held.items()}, dimensions)
    setattr(user, _ATTR, kept)
    return kept


def forget_memberships(user) -> None:
    """Drop what this user object holds, so the next `memberships` call fetches again."""
    if _authenticated(user) and getattr(user, _ATTR, None) is not None:
        setattr(user, _ATTR, None)


__all__ = ["NONE", "Memberships", "forget_memberships", "joined", "memberships", "remember"]
