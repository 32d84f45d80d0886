"""The admin matrix: every registered ModelAdmin, walked as an attacker would by every
reader of the leak fixture (each role of Dimension A, a staff user of Dimension B,
a staff user with no role, anonymous), over a world where B holds A's very texts.

It searches each changelist for each value the reader may not see, requests every
choice of every declared filter, tries the lookups no filter declares, opens (GET and
POST) every history and history-form URL of rows of both Dimensions, and every other
object URL with another Dimension's ids. It asserts no withheld, disposed or foreign
text in any answer, no 5xx, no oracle (the answer for a withheld value is the answer
for a never-stored string; for another Dimension's id, the answer for an unknown id),
and no row changed. Admins come from `admin.site._registry` and URLs from each
admin's `get_urls()`, so an admin or route added later is walked without editing this.
"""

from __future__ import annotations

import pytest

from tests.leaks import fixture
from tests.leaks.admin_probes import lookup_pair, search_terms, try_filters, try_lookups
from tests.leaks.admin_walk import (
    Admin,
    check_rows,
    form_data,
    history_ids,
    object_routes,
    object_url,
    query,
    registered,
    sample_rows,
    unknown_history_id,
    unknown_pk,
)
from tests.leaks.probing import Answer, Probe, changed_rows, foreign_to, model_state, snapshot

FOREIGN = "answers another Dimension's id otherwise than an unknown one"


def _verdict(probe: Probe, before: dict, *, at_least: int) -> None:
    changed = changed_rows(before, snapshot())
    report = probe.report()
    print(report)  # the grouped list, for whoever routes the fixes
    assert not changed and not probe.failures, "\n".join(
        [*(["rows changed:", *changed] if changed else []), report]
    )
    assert probe.requests >= at_least  # the walk reached what it should


def _reachable(probe: Probe, admin_: Admin) -> dict[str, Answer]:
    """The changelist as each reader it opens for (each answer checked on the way)."""
    out = {}
    for reader in fixture.READERS:
        answer = probe.get(reader, admin_.changelist)
        check_rows(probe, admin_, answer)
        if answer.status == 200:
            out[reader] = answer
    return out


@pytest.mark.django_db
def test_admin_search_finds_nothing_by_a_value_the_reader_may_not_see():
    world = fixture.build()
    probe, before = Probe(world), snapshot()
    for admin_ in registered():
        reachable = _reachable(probe, admin_)
        for reader in fixture.READERS:
            if reader not in reachable:
                # Whatever is searched, a closed admin answers the same.
                lookup_pair(probe, admin_, reader, "q", sorted(world.forbidden(reader))[0])
                continue
            hidden, shared = search_terms(probe, admin_, reader)
            for term in hidden:
                lookup_pair(probe, admin_, reader, "q", term)
            # Texts both Dimensions hold: found, but only in the reader's own rows.
            for term in shared:
                check_rows(probe, admin_, probe.get(reader, query(admin_, "q", term), echo=[term]))
    _verdict(probe, before, at_least=400)


@pytest.mark.django_db
def test_admin_filters_and_lookups_select_only_rows_disclosed_to_the_reader():
    world = fixture.build()
    probe, before = Probe(world), snapshot()
    for admin_ in registered():
        readers = _reachable(probe, admin_)
        for index, (reader, plain) in enumerate(readers.items()):
            turn = (index, len(readers))
            try_filters(probe, admin_, reader, plain, turn)
            try_lookups(probe, admin_, reader, turn)
    _verdict(probe, before, at_least=800)


def _send(probe: Probe, model, reader: str, url: str, data, *, echo) -> Answer:
    """GET, or POST `data` and name the request if it changed the model's rows (the
    snapshot around each test says the same for every table, without the culprit)."""
    if data is None:
        return probe.get(reader, url, echo=echo)
    state = model_state(model)
    answer = probe.post(reader, url, data, echo=echo)
    if model_state(model) != state:
        probe.fail("a POST changed rows", answer, f"{model._meta.label} rows")
    return answer


def _no_revert_form(probe: Probe, answer) -> None:
    """There is no history form (API.md "Admin"): 404, or anonymous's sign-in redirect."""
    to_login = (
        answer.reader == "anonymous" and answer.status == 302 and "/login/" in answer.location
    )
    if answer.status != 404 and not to_login:
        probe.fail("a history form answers (expected 404)", answer)


@pytest.mark.django_db
def test_admin_history_urls_show_no_foreign_row_and_revert_nothing():
    world = fixture.build()
    probe, before = Probe(world), snapshot()
    for admin_ in registered():
        model = admin_.model
        rows = sample_rows(probe, admin_)
        routes = [r for r in object_routes(admin_) if r.history]
        for reader in fixture.READERS:
            user, own = world.users[reader], probe.own[reader]
            for route, pk in ((r, pk) for r in routes for pk in rows.values()):
                unknown, unknown_version = unknown_pk(model), unknown_history_id(model)
                version = ""
                if route.revert_form:
                    version = (history_ids(model, pk) or [unknown_version])[0]
                url = object_url(admin_, route, pk, version)
                missing = object_url(admin_, route, unknown, unknown_version)
                # One placeholder for every id: a row's pk and its history id may coincide.
                values = {pk: "<ID>", unknown: "<ID>"}
                if route.revert_form:
                    values.update({version: "<ID>", unknown_version: "<ID>"})
                row = model._base_manager.get(pk=pk)
                bodies = [None]
                if route.revert_form:
                    bodies += [form_data(row, user=user, changed=c) for c in (False, True)]
                for data in bodies:
                    answer = _send(probe, model, reader, url, data, echo=[pk, version])
                    if route.revert_form:
                        _no_revert_form(probe, answer)
                    if foreign_to(probe.rows[model].get(pk), own):
                        other = probe.request(
                            reader, missing, data, echo=[unknown, unknown_version]
                        )
                        probe.same_as(answer, other, values, FOREIGN)
    _verdict(probe, before, at_least=1000)


@pytest.mark.django_db
def test_admin_object_urls_answer_another_dimensions_ids_as_unknown_ones():
    world = fixture.build()
    probe, before = Probe(world), snapshot()
    for admin_ in registered():
        model = admin_.model
        rows = sample_rows(probe, admin_)
        routes = [r for r in object_routes(admin_) if not r.history]
        for reader in fixture.READERS:
            user, own = world.users[reader], probe.own[reader]
            foreign = [pk for pk in rows.values() if foreign_to(probe.rows[model].get(pk), own)]
            for route, pk in ((r, pk) for r in routes for pk in foreign[:1]):
                unknown = unknown_pk(model)
                values = {pk: "<ID>", unknown: "<ID>"}
                url, missing = object_url(admin_, route, pk), object_url(admin_, route, unknown)
                data = form_data(model._base_manager.get(pk=pk), user=user, changed=True)
                for body in (None, data):
                    answer = _send(probe, model, reader, url, body, echo=[pk])
                    other = probe.request(reader, missing, body, echo=[unknown])
                    probe.same_as(answer, other, values, FOREIGN)
    _verdict(probe, before, at_least=500)
