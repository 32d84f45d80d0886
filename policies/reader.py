"""The one per-user reader: every read of a link or a passage asks it.

Think Sentry's `serialize(objects, user)`: a `Reader` knows who one user is in each
Dimension (roles, from `policies.memberships`: once per request) and which
disclosure decisions cover them (fetched once per Dimension, recipient and
purpose), and hands each object to the *kind* registered for its model
(`grounding.reader` for links, `evidence.reader` for passages), which decides what
of it the user may see. The REST API, the human pages, the admin, the exports and
the management commands all read through `reader_for(request or user)`; none of
them computes disclosure itself.

Rules every kind shares, written once here:
- a resource of a Dimension where the user holds no role is `not_found`, exactly
  as one that does not exist (existence is not disclosed);
- default deny: a field is shown only when a valid, unrevoked decision covering the
  recipient and purpose names it; a restricted source's fields only when a covering
  decision names restricted sources too;
- reserved internal recipients (`role:<role>`) are answered only for users who
  hold that role in the Dimension.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from django.db.models import Model, Q, QuerySet

from common.kernel.refusals import Refusal
from policies.choices import Role
from policies.disclosure import PURPOSE_BY_ROLE, Coverage, coverage_for, valid_decisions
from policies.memberships import memberships
from policies.models import Dimension, DisclosureDecision

INTERNAL_PREFIX = "role:"


@dataclass(frozen=True)
class Recipient:
    """Who a read is for, as recipient scopes, and for which purpose."""

    scopes: tuple[str, ...]
    purpose: str


class Kind(Protocol):
    """What the reader needs of each kind of object it shows."""

    def read(self, reader: Reader, obj: Any, **options: Any) -> dict[str, Any]: ...

    def scope(self, reader: Reader, queryset: QuerySet, **options: Any) -> QuerySet: ...

    def withheld(self, reader: Reader, obj: Any) -> list[str] | None: ...


_KINDS: dict[type[Model], Kind] = {}


def register_kind(model: type[Model], kind: Kind) -> None:
    """Called by each app's reader module when its app is ready."""
    _KINDS[model] = kind


def _kind_of(model: type[Model]) -> Kind:
    for klass in model.__mro__:
        if klass in _KINDS:
            return _KINDS[klass]
    raise LookupError(f"no reader kind is registered for {model.__name__}")


class Reader:
    """What one user may see. Build one per request (`reader_for`): it caches
    decisions for that request only (roles: `policies.memberships`, on the request's
    user), so a revoked decision or role takes effect at the next request."""

    def __init__(self, user) -> None:
        self.user = user
        self._decisions: dict[tuple, list[DisclosureDecision]] = {}
        self._listed: dict[tuple, tuple[frozenset[str] | None, ...]] = {}
        self._coverages: dict[tuple, Coverage] = {}

    # -- who the user is, per Dimension

    def roles(self, dimension_id: int | None) -> frozenset[str]:
        return memberships(self.user).of(dimension_id)

    def dimensions(self, *roles: str) -> list[Dimension]:
        """Dimensions where the user holds one of `roles` (any role if none given)."""
        return memberships(self.user).holding(*roles)

    def holds(self, *roles: str, dimension_id: int | None = None) -> bool:
        """One of `roles` (any if none given), in the Dimension or in any."""
        if dimension_id is not None:
            held = self.roles(dimension_id)
            return bool(held & {str(r) for r in roles}) if roles else bool(held)
        return bool(self.dimensions(*roles))

    def require_member(self, dimension_id: int | None, what: str = "resource") -> None:
        """`not_found` unless the user holds some role in the Dimension."""
        if not self.roles(dimension_id):
            raise Refusal("not_found", f"no {what} of yours has this id.")

    def require_role(self, dimension_id: int | None, *roles: str, what: str = "resource") -> None:
        """`not_found` outside the user's Dimensions, `role_required` without the role."""
        self.require_member(dimension_id, what)
        if not self.roles(dimension_id) & {str(r) for r in roles}:
            names = " or ".join(str(r) for r in roles)
            raise Refusal("role_required", f"reading this needs the {names} role in its Dimension.")

    # -- recipients and decisions

    def staff_recipients(
        self, dimension_id: int | None, roles: Iterable[str] | None = None
    ) -> tuple[Recipient, ...]:
        """A staff member reads in each internal role they hold (of `roles`, if given),
        under its purpose."""
        held = self.roles(dimension_id)
        if roles is not None:
            held = held & {str(r) for r in roles}
        return tuple(
            Recipient((f"{INTERNAL_PREFIX}{role}",), PURPOSE_BY_ROLE[role])
            for role in sorted(held)
            if role in PURPOSE_BY_ROLE
        )

    def recipient(self, dimension_id: int, scope: str, purpose: str) -> Recipient:
        """A named recipient; a reserved internal one only for holders of that role."""
        if scope.startswith(INTERNAL_PREFIX):
            role = scope[len(INTERNAL_PREFIX) :]
            if role not in Role.values or role not in self.roles(dimension_id):
                raise Refusal(
                    "recipient_reserved",
                    "internal recipients (role:…) are answered only for holders of that role.",
                )
        return Recipient((scope,), purpose)

    def decisions(self, dimension_id: int, recipient: Recipient) -> list[DisclosureDecision]:
        key = (dimension_id, recipient)
        if key not in self._decisions:
            self._decisions[key] = valid_decisions(
                dimension=dimension_id,
                recipient_scopes=recipient.scopes,
                purpose=recipient.purpose,
            )
        return self._decisions[key]

    def _listed_ids(self, dimension_id: int, recipient: Recipient):
        key = (dimension_id, recipient)
        if key not in self._listed:
            self._listed[key] = tuple(
                None if d.grounding_ids is None else frozenset(str(g) for g in d.grounding_ids)
                for d in self.decisions(dimension_id, recipient)
            )
        return self._listed[key]

    def coverage(
        self,
        dimension_id: int,
        grounding_id: uuid.UUID | str | None,
        recipients: Iterable[Recipient] | None = None,
    ) -> Coverage:
        """What the recipients together (the user's staff roles by default) may see of
        one link (or, with no link, what the Dimension-wide decisions let them see).

        Links covered by the same decisions share one Coverage: a page of links costs
        the decision queries once, not once per link.
        """
        if recipients is None:
            recipients = self.staff_recipients(dimension_id)
        wanted = None if grounding_id is None else str(grounding_id)
        chosen: list[list[DisclosureDecision]] = []
        key: list[Any] = [dimension_id]
        for recipient in recipients:
            decisions = self.decisions(dimension_id, recipient)
            listed = self._listed_ids(dimension_id, recipient)
            picked = tuple(
                i for i, ids in enumerate(listed) if ids is None or (wanted and wanted in ids)
            )
            chosen.append([decisions[i] for i in picked])
            key.append((recipient, picked))
        memo = tuple(key)
        if memo not in self._coverages:
            self._coverages[memo] = _merge(
                coverage_for(decisions, grounding_id or "") for decisions in chosen
            )
        return self._coverages[memo]

    def covered_q(self, *, dimension_field: str, id_field: str, fields: Iterable[str] = ()) -> Q:
        """Rows whose link some decision lets the user read in a staff role, in SQL.

        With `fields`, only links where each of them is visible: a filter on a
        withheld group must not select (and so reveal) by its value, and leaving such
        links out in SQL keeps pages full.
        """
        required = set(fields)
        scope = Q(pk__in=[])
        for dimension in self.dimensions():
            decisions = [
                d
                for recipient in self.staff_recipients(dimension.pk)
                for d in self.decisions(dimension.pk, recipient)
            ]
            clauses = [_decision_q(d, dimension_field, id_field, dimension.pk) for d in decisions]
            if not clauses:
                continue
            part = _any(clauses)
            for name in required:
                part &= _any(
                    [
                        _decision_q(d, dimension_field, id_field, dimension.pk)
                        for d in decisions
                        if name in d.fields
                    ]
                )
            scope |= part
        return scope

    # -- every object through the kind registered for its model

    def read(self, obj: Model, **options: Any) -> dict[str, Any]:
        """The object as this user may see it, or a Refusal (`not_found`,
        `role_required`, `disclosure_not_decided`, …)."""
        return _kind_of(type(obj)).read(self, obj, **options)

    def read_or_none(self, obj: Model, **options: Any) -> dict[str, Any] | None:
        try:
            return self.read(obj, **options)
        except Refusal:
            return None

    def read_many(self, objects: Iterable[Model], **options: Any) -> list[dict[str, Any]]:
        """What the user may see of each object, leaving out the ones refused."""
        out = []
        for obj in objects:
            document = self.read_or_none(obj, **options)
            if document is not None:
                out.append(document)
        return out

    def scope(self, queryset: QuerySet, **options: Any) -> QuerySet:
        """Only the rows this user may read at all (a list, the admin's changelist)."""
        return _kind_of(options.pop("kind", queryset.model)).scope(self, queryset, **options)

    def withheld(self, obj: Model) -> list[str] | None:
        """Field names withheld from this user (None: the object is not readable)."""
        return _kind_of(type(obj)).withheld(self, obj)


def _decision_q(decision: DisclosureDecision, dimension_field: str, id_field: str, pk: int) -> Q:
    if decision.grounding_ids is None:
        return Q(**{dimension_field: pk})
    ids = []
    for value in decision.grounding_ids:
        try:
            ids.append(uuid.UUID(str(value)))
        except ValueError:
            continue
    return Q(**{dimension_field: pk, f"{id_field}__in": ids})


def _any(clauses: list[Q]) -> Q:
    scope = Q(pk__in=[])
    for clause in clauses:
        scope |= clause
    return scope


def _merge(parts: Iterable[Coverage]) -> Coverage:
    fields: set[str] = set()
    restricted: set[str] = set()
    refs: list[str] = []
    for part in parts:
        fields |= part.fields
        restricted |= part.restricted_fields
        refs += part.decision_refs
    return Coverage(frozenset(fields), frozenset(restricted), tuple(refs))


def reader_for(subject) -> Reader:
    """The reader of a request (built once per request) or of a user."""
    request = getattr(subject, "_request", subject)  # a DRF Request wraps Django's
    if hasattr(request, "user") and hasattr(request, "META"):
        reader = getattr(request, "_grounding_reader", None)
        if reader is None or reader.user is not request.user:
            reader = Reader(request.user)
            request._grounding_reader = reader
        return reader
    return Reader(subject)
