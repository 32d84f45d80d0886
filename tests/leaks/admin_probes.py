"""What the admin matrix does to one changelist as one reader: search it for values the
reader may not see, request its filters' choices, filter it by another Dimension's ids,
and try the lookups it does not declare. Each probe sending a hidden value is compared
with the same probe sending a never-stored one (`lookup_pair`).
"""

from __future__ import annotations

from functools import reduce
from operator import or_

from django.core.exceptions import FieldError, ValidationError
from django.db import DatabaseError, transaction
from django.db.models import Q

from tests.leaks.admin_walk import (
    Admin,
    changelist_instance,
    check_rows,
    declared_parameters,
    filter_choices,
    hierarchy_links,
    listed,
    query,
    refused,
    search_paths,
    stored_texts,
    unknown_pk,
)
from tests.leaks.probing import Answer, Probe, foreign_to, never_stored

SEARCHED = 6  # hidden values searched (or looked up) per admin and reader


def _scoped(admin_: Admin, user):
    return admin_.modeladmin.get_queryset(admin_.request(user))


def _exists(queryset) -> bool:
    """Whether the queryset has rows; a lookup the field does not take selects none (in
    a savepoint: on PostgreSQL a failed statement spoils the transaction)."""
    try:
        with transaction.atomic():
            return queryset().exists()
    except (FieldError, DatabaseError, ValueError, ValidationError, TypeError):
        return False


def selects(admin_: Admin, user, model_field, mark: str) -> bool:
    """Whether rows the reader's changelist holds have `mark` in this field."""
    lookup = {f"{model_field.name}__icontains": mark}
    return _exists(lambda: _scoped(admin_, user).filter(**lookup))


def search_terms(probe: Probe, admin_: Admin, reader: str) -> tuple[list[str], list[str]]:
    """What to search as `reader`: values it may not see that the admin's search fields
    hold (rows of its own changelist first; the first two also cut short, since a
    search matches parts), and texts it may see that both Dimensions hold."""
    world, user = probe.world, probe.world.users[reader]
    forbidden = world.forbidden(reader)
    paths = search_paths(admin_, user)
    blob = "\n".join(t for p in paths for t in stored_texts(probe, admin_.model, p))
    candidates = [m for m in forbidden if m in blob]
    scoped = _scoped(admin_, user)

    def in_scope(mark: str) -> bool:
        clauses = [Q(**{f"{p}__icontains": mark}) for p in paths]
        return _exists(lambda: scoped.filter(reduce(or_, clauses)))

    first = [m for m in candidates if in_scope(m)]
    chosen = spread(first, forbidden, SEARCHED)
    chosen += spread([m for m in candidates if m not in first], forbidden, SEARCHED - len(chosen))
    terms: list[str] = []
    for index, mark in enumerate(chosen):
        terms += [mark, mark[:6], mark[1:]] if index < 2 else [mark]
    seen = world.visible.get(reader, set()) - world.disposed_for(reader)
    return terms, sorted(m for m in seen if m in blob)[:2]


def lookup_pair(probe: Probe, admin_: Admin, reader: str, param: str, value: str) -> bool:
    """The changelist with `param=value` (a value the reader may not see) answers as it
    does with a never-stored value in its place: same rows, same count, same page."""
    control = value
    for mark in probe.world.markers:
        control = control.replace(mark, never_stored(mark))
    if control == value:
        control = never_stored(value)
    answer = probe.get(reader, query(admin_, param, value), echo=[value])
    other = probe.get(reader, query(admin_, param, control), echo=[control])
    for each in (answer, other):
        check_rows(probe, admin_, each)
    if refused(answer) and refused(other) and answer.status == other.status:
        return True
    found, expected = listed(admin_, answer), listed(admin_, other)
    where = next(
        (f"{o}'s {g}" for m, (o, g) in probe.world.markers.items() if m in value or value in m),
        repr(value),
    )
    if found != expected:
        probe.fail(
            "selects rows by a value the reader may not see",
            answer,
            f"{param} on {where}: {found[0]} rows {found[1][:2]}, never-stored: {expected[0]}",
        )
        return False
    return probe.same_as(
        answer, other, {value: "<Q>", control: "<Q>"}, "answers a hidden value otherwise"
    )


def foreign_filter_values(probe: Probe, admin_: Admin, reader: str, changelist) -> None:
    """A declared filter on a relation, given another Dimension's id, answers as for an
    id that does not exist."""
    own = probe.own[reader]
    for spec in changelist.filter_specs:
        related = getattr(getattr(spec, "field", None), "related_model", None)
        param = getattr(spec, "lookup_kwarg", None)
        if related not in probe.rows or not param:
            continue
        rows = sorted(probe.rows[related].items())
        foreign = next((pk for pk, dims in rows if foreign_to(dims, own)), None)
        if foreign is None:
            continue
        unknown = unknown_pk(related)
        answer = probe.get(reader, query(admin_, param, foreign), echo=[foreign])
        other = probe.get(reader, query(admin_, param, unknown), echo=[unknown])
        probe.same_as(
            answer, other, {foreign: "<ID>", unknown: "<ID>"}, "filters by another Dimension's id"
        )


def spread(markers: list[str], where: dict[str, tuple[str, str]], k: int) -> list[str]:
    """Up to `k` markers, one owner after another (so each kind of text is tried)."""
    by_owner: dict[str, list[str]] = {}
    for mark in sorted(markers):
        by_owner.setdefault(where[mark][0], []).append(mark)
    out: list[str] = []
    while len(out) < k and any(by_owner.values()):
        for owner in sorted(by_owner):
            if by_owner[owner] and len(out) < k:
                out.append(by_owner[owner].pop(0))
    return out


def try_filters(probe: Probe, admin_: Admin, reader: str, plain: Answer, turn: tuple[int, int]):
    """Every choice of every declared filter and of the date hierarchy. Each reader tries
    every filter that can cross tenants; a filter on a value only narrows the rows the
    plain page showed, so its choices go round the readers (`turn`: mine, of how many)."""
    changelist = changelist_instance(admin_, probe.world.users[reader])
    choices = [*filter_choices(changelist), *((False, q) for q in hierarchy_links(plain, admin_))]
    for n, (tenant, found) in enumerate(dict.fromkeys(choices)):
        if tenant or n % turn[1] == turn[0]:
            check_rows(probe, admin_, probe.get(reader, admin_.changelist + found))
    foreign_filter_values(probe, admin_, reader, changelist)


def try_lookups(probe: Probe, admin_: Admin, reader: str, turn: tuple[int, int]) -> None:
    """`<field>__icontains` and `<field>__exact` for every concrete field no filter
    declares: each must be refused. Django refuses before it reads the value, so each
    lookup is tried by one reader in turn with a hidden value, and by every reader
    whose own rows hold, in that field, a value it may not see (with that value)."""
    user, forbidden = probe.world.users[reader], probe.world.forbidden(reader)
    declared = declared_parameters(admin_, changelist_instance(admin_, user), user)
    fields = [(f, lookup) for f in admin_.model._meta.concrete_fields for lookup in LOOKUPS]
    for n, (model_field, lookup) in enumerate(fields):
        param = f"{model_field.name}__{lookup}"
        if param in declared:
            continue
        texts = (
            [] if model_field.is_relation else stored_texts(probe, admin_.model, model_field.name)
        )
        hidden = [
            m
            for m in sorted(forbidden)
            if any(m in t for t in texts) and selects(admin_, user, model_field, m)
        ]
        if not hidden and n % turn[1] != turn[0]:
            continue
        values = [_value(m, texts, lookup) for m in hidden[:SEARCHED]] or [sorted(forbidden)[0]]
        answer = probe.get(reader, query(admin_, param, values[0]), echo=[values[0]])
        check_rows(probe, admin_, answer)
        if refused(answer):
            continue
        probe.fail("an undeclared lookup is not refused", answer, param)
        # Accepted: then no hidden value it could select may select anything.
        for value in values if hidden else ():
            lookup_pair(probe, admin_, reader, param, value)


LOOKUPS = ("icontains", "exact")


def _value(mark: str, texts: list[str], lookup: str) -> str:
    """The hidden value to send: the marker, or (for exact) the stored text holding it."""
    return next((t for t in texts if mark in t), mark) if lookup == "exact" else mark
