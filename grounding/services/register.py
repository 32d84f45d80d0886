"""register: create candidate links. Never retrieves, generates or evaluates.

The operation: its bodies and declarations, each item's checks and preconditions,
the master_ref conflict and the write; the rows a checked item becomes are built in
`grounding.services.register_rows`.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError
from django.db.models import Q

from common.kernel.refusals import Offender, Refusal, pointer_join
from common.kernel.together import Insert
from grounding import bodies
from grounding.bodies import BULK_MAX_ITEMS
from grounding.models import GroundingLink, PassageBinding, StatementBinding
from grounding.services import input_rules, inputs
from grounding.services._common import refusal_context, refuse_invalid
from grounding.services.passages import Lookups, resolve_passage
from grounding.services.register_rows import Prepared, build
from policies import audit
from policies.actions import composable
from policies.choices import Role
from policies.operations import Operation
from policies.services import (
    require_active,
    require_published,
    require_role,
    unknown_dimension,
)

REGISTER_REASON = "registered as a candidate"
MASTER_REF_CONFLICT = "master_ref_conflict"
# Top-level string members, bounded by their columns (GroundingLink.owner_ref, …).
_STRINGS = ("owner_ref", "master_ref", "identity_decision")


@composable
def do_register(*, actor, payload: dict[str, Any]) -> GroundingLink:
    """Register one candidate link: record_state candidate, unassessed, revision 1."""
    prepared = _prepare(actor, payload, pointer="", lookups=Lookups(actor))
    refuse_master_ref_conflicts([prepared], pointers=[""])
    _write([prepared], actor=actor, action=REGISTER.action)
    return prepared.link


@composable
def do_register_many(
    *, actor, items: list[dict[str, Any]], action: str | None = None
) -> list[GroundingLink]:
    """Register all items or none, with bulk history rows (one per created row); each
    link's event is named `action` (the operation that registered it; by default
    registration's)."""
    if not isinstance(items, list) or not items:
        raise Refusal(
            "validation_error",
            "items must be a non-empty list.",
            offenders=[Offender("/items", "required", "items must be a non-empty list.")],
        )
    if len(items) > BULK_MAX_ITEMS:
        # Before any lookup: one request holds one bounded transaction.
        detail = f"items holds {len(items)} items; at most {BULK_MAX_ITEMS} are taken."
        raise Refusal(
            "validation_error",
            "the request is not valid.",
            offenders=[Offender("/items", "max_items", detail)],
        )
    lookups = Lookups(actor)
    lookups.preload_passages(
        [
            str(item["passage"]["passage_id"])
            for item in items
            if isinstance(item, dict)
            and isinstance(item.get("passage"), dict)
            and item["passage"].get("passage_id")
        ]
    )
    prepared: list[Prepared] = []
    offenders: list[Offender] = []
    for index, item in enumerate(items):
        try:
            prepared.append(_prepare(actor, item, pointer=f"/items/{index}", lookups=lookups))
        except Refusal as refusal:
            if refusal.code != "validation_error":
                raise
            offenders += refusal.offenders
    refuse_invalid(offenders)
    refuse_master_ref_conflicts(prepared, pointers=[f"/items/{i}" for i in range(len(items))])
    _write(prepared, actor=actor, action=action or REGISTER.action)
    return [p.link for p in prepared]


# The bulk operation's action: its accepted links and its refusals are audited under
# one name (from-citations, composing `do_register_many`, keeps "register").
BULK_ACTION = "register_bulk"


@composable
def do_register_bulk(*, actor, items: list[dict[str, Any]]) -> list[GroundingLink]:
    """The bulk operation: `do_register_many`, its links' events named `register_bulk`."""
    return do_register_many(actor=actor, items=items, action=BULK_ACTION)


# What registration refuses: the body's checks (an unknown Dimension or profile
# among them), the Dimension's state, the role, the profile's, a taken master_ref.
REGISTER_REFUSALS = ("validation_error", "dimension_inactive", "role_required",
                     "profile_not_published", "master_ref_conflict")  # fmt: skip
REGISTER = Operation(
    "register",
    body=do_register,
    input=bodies.RegisterSerializer,
    output="grounding.api.serializers_link.LinkSerializer",
    roles=(Role.CURATOR,),
    refusals=REGISTER_REFUSALS,
    success=(201,),
    headers=("ETag", "Location"),
    summary="Register a candidate link",
    context=refusal_context,
)
REGISTER_BULK = Operation(
    BULK_ACTION,
    body=do_register_bulk,
    input=bodies.BulkRegisterSerializer,
    output="grounding.api.serializers.BulkResultSerializer",
    roles=REGISTER.roles,
    refusals=REGISTER_REFUSALS,
    success=(201,),
    summary="Register many candidate links, all or none",
    context=refusal_context,
)
register = REGISTER.entry
register_many = REGISTER_BULK.entry


def refuse_master_ref_conflicts(prepared: list[Prepared], *, pointers: list[str]) -> None:
    """master_ref is unique per Dimension: one already recorded in the item's Dimension,
    or given twice for one Dimension in one request, is a 409 master_ref_conflict naming
    each offending item (never the database's 500). Another Dimension's links are not
    looked at: the same ref there is another resource, and no answer tells of it."""
    seen: dict[tuple[int, str], int] = {}
    offenders: list[Offender] = []
    for index, item in enumerate(prepared):
        ref = item.link.master_ref
        if ref is None:
            continue
        key = (item.link.dimension_id, ref)
        if key in seen:
            offenders.append(
                Offender(
                    pointer_join(pointers[index], "master_ref"),
                    "duplicate",
                    f"the same master_ref as {pointers[seen[key]] or 'another item'}/master_ref.",
                )
            )
        else:
            seen[key] = index
    taken = _recorded_master_refs(list(seen))
    offenders += [
        Offender(
            pointer_join(pointers[index], "master_ref"),
            "unique",
            "a link with this master_ref is already recorded.",
        )
        for key, index in seen.items()
        if key in taken
    ]
    if offenders:
        raise MasterRefConflict(
            MASTER_REF_CONFLICT,
            "a master_ref is already recorded or given twice.",
            offenders=sorted(offenders, key=lambda o: o.pointer),
        )


def _recorded_master_refs(keys: list[tuple[int, str]]) -> set[tuple[int, str]]:
    """Which (Dimension id, master_ref) pairs are recorded: one query, each Dimension's
    refs looked up in that Dimension only."""
    if not keys:
        return set()
    by_dimension: dict[int, list[str]] = {}
    for dimension_id, ref in keys:
        by_dimension.setdefault(dimension_id, []).append(ref)
    where = Q(pk__in=[])
    for dimension_id, refs in sorted(by_dimension.items()):
        where |= Q(dimension_id=dimension_id, master_ref__in=refs)
    return set(GroundingLink.objects.filter(where).values_list("dimension_id", "master_ref"))


class MasterRefConflict(Refusal, IntegrityError):
    """The unique violation the insert would have hit, found before it: still an
    IntegrityError to callers that retry on one (from-citations replays the links a
    concurrent identical request committed), a 409 refusal to everyone else."""


def _prepare(actor, payload: Any, *, pointer: str, lookups: Lookups) -> Prepared:
    if not isinstance(payload, dict):
        refuse_invalid([Offender(pointer or "/", "type", "the body must be an object.")])
    body = inputs.of(REGISTER)
    offenders = body.unknown(payload, pointer)
    # A Dimension where the caller holds no role reads as one that does not exist.
    dimension, profile = _resolve_policy(actor, payload, pointer, lookups, offenders)
    if dimension is not None and profile is not None:
        # Role and policy preconditions come before any detail of the input is judged.
        require_active(dimension)
        require_role(actor, dimension, *REGISTER.roles)
        require_published(profile)

    offenders += body.strings(payload, _STRINGS, pointer=pointer)
    statement = payload.get("statement")
    anchor = payload.get("anchor")
    support = payload.get("support")
    time = payload.get("time") or {}
    # The profile's stricter schemas apply to the statement, anchor and support groups.
    for group, value, pinned in (
        (inputs.STATEMENT, statement, profile),
        (inputs.ANCHOR, anchor, profile),
        (inputs.SUPPORT, support, profile),
        (inputs.TIME, time, None),
        (inputs.DISCLOSURE, payload.get("disclosure") or {}, None),
    ):
        offenders += inputs.validate_group(
            group, value, profile=pinned, pointer=pointer_join(pointer, group.name)
        )
    if payload.get("related_link_refs") is not None:
        offenders += body.check(
            "related_link_refs",
            payload["related_link_refs"],
            pointer=pointer_join(pointer, "related_link_refs"),
        )
    if isinstance(support, dict):
        offenders += input_rules.check_use_basis(support, pointer=pointer_join(pointer, "support"))
    if profile is not None:
        offenders += [
            Offender(pointer + o.pointer, o.code, o.detail)
            for o in input_rules.check_profile_vocabulary(
                profile=profile,
                support=support if isinstance(support, dict) else None,
                anchor=anchor if isinstance(anchor, dict) else None,
            )
        ]
    passage_values, passage = resolve_passage(
        payload.get("passage"),
        pointer_join(pointer, "passage"),
        lookups,
        offenders,
        dimension=dimension,
    )
    refuse_invalid(offenders)
    return build(
        actor=actor,
        payload=payload,
        dimension=dimension,
        profile=profile,
        passage=passage,
        passage_values=passage_values,
    )


def _resolve_policy(actor, payload, pointer, lookups, offenders):
    dimension = profile = None
    name = payload.get("dimension")
    if not isinstance(name, str) or not name:
        offenders.append(
            Offender(pointer_join(pointer, "dimension"), "required", "dimension is required.")
        )
    else:
        dimension = lookups.dimension_of(actor, name)
        if dimension is None:
            offenders.append(unknown_dimension(pointer_join(pointer, "dimension")))
    ref = payload.get("profile")
    if not isinstance(ref, str) or "@" not in ref:
        offenders.append(
            Offender(
                pointer_join(pointer, "profile"), "required", "profile is required as name@version."
            )
        )
    else:
        profile = lookups.profile(ref, dimension)
        if profile is None:
            offenders.append(
                Offender(pointer_join(pointer, "profile"), "unknown_reference", "no such profile.")
            )
    return dimension, profile


def _write(prepared: list[Prepared], *, actor, action: str) -> None:
    """Bindings first (the link's FKs to them are deferred), then the links, then the
    audit events: one history row per object, one statement for a few links and one
    COPY per table for a batch."""
    audit.record_many(
        actor=actor,
        action=action,
        entries=[
            {
                "grounding_id": item.link.grounding_id,
                "dimension_ref": item.link.dimension.name,
                "resulting_revision": 1,
            }
            for item in prepared
        ],
        along=[
            Insert(StatementBinding, [p.statement for p in prepared]),
            Insert(PassageBinding, [p.passage for p in prepared]),
            Insert(GroundingLink, [p.link for p in prepared]),
        ],
        change_reason=REGISTER_REASON,
    )
