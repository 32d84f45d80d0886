"""Tenancy over the leak fixture's two Dimensions (API.md "Tenancy"): every route that
takes an id answers a reader asking for another Dimension's row exactly as for an id
that does not exist; the second Dimension holds the same refs; and each Dimension's
disposal leaves the other's copies of the same bytes readable.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from policies.choices import DisclosableField as F
from tests.leaks import fixture
from tests.leaks.api_walk import NUMBERS, fill, id_routes, params_of, resolve, unknown_value
from tests.leaks.probing import Probe, changed_rows, foreign_to, snapshot

FOREIGN = "answers another Dimension's id otherwise than an unknown one"
# Writes are sent with an empty body: whatever the order of checks, a foreign id and
# an unknown one must meet the same one first.
WRITES = ("POST", "PATCH", "PUT", "DELETE")


def _rows_for(probe: Probe, param, reader: str) -> tuple[list, list]:
    """(rows of the reader's own Dimensions, rows foreign to it) of the param's model.
    A foreign row counts only when its value names none of the reader's own rows (the
    same ref in two Dimensions is the reader's own resource); the first and the last
    foreign row are taken (the first copy, and the Dimension's own)."""
    own, foreign = [], []
    for pk, dims in sorted(probe.rows.get(param.model, {}).items()):
        (foreign if foreign_to(dims, probe.own[reader]) else own).append(pk)
    found = param.model._base_manager.in_bulk([*own, *foreign])
    objects = {str(pk): row for pk, row in found.items()}
    mine = [objects[pk] for pk in own if pk in objects]
    taken = {param.value(row) for row in mine}
    others = [objects[pk] for pk in foreign if pk in objects]
    others = [row for row in others if param.value(row) not in taken]
    return mine, list({id(r): r for r in [*others[:1], *others[-1:]]}.values())


@pytest.mark.django_db
def test_the_api_answers_another_dimensions_ids_as_unknown_ones():
    world = fixture.build()
    probe, before = Probe(world, admin_text=False), snapshot()
    unresolved = []
    walked = 0
    for route in id_routes():
        params = params_of(route)
        resolved = {name: resolve(route, name, conv) for name, conv in params}
        unresolved += [
            f"{route.name}: <{n}>" for n, p in resolved.items() if p is None and n not in NUMBERS
        ]
        for reader in fixture.READERS:
            # Every parameter from the reader's own rows (A's for a reader of none)…
            base = dict(NUMBERS)
            rows = {n: _rows_for(probe, p, reader) for n, p in resolved.items() if p}
            for name, param in resolved.items():
                if param is None:
                    continue
                mine = rows[name][0]
                fallback = mine or _rows_for(probe, param, "curator")[0]
                base[name] = param.value(fallback[0]) if fallback else unknown_value(param, "x")
            # …then one of them another Dimension's, against one that does not exist.
            for name, param in resolved.items():
                if param is None:
                    continue
                for index, row in enumerate(rows[name][1]):
                    value = param.value(row)
                    missing = unknown_value(param, value)
                    url, other_url = (fill(route, {**base, name: v}) for v in (value, missing))
                    methods = ("GET", *WRITES) if index == 0 else ("GET",)
                    for method in methods:
                        extra = {"content_type": "application/json", "data": json.dumps({})}
                        extra = extra if method != "GET" else {}
                        headers = {"HTTP_IF_MATCH": '"1"'}
                        answer = probe.send(reader, method, url, echo=[value], **extra, **headers)
                        other = probe.send(
                            reader, method, other_url, echo=[missing], **extra, **headers
                        )
                        probe.same_as(answer, other, {value: "<ID>", missing: "<ID>"}, FOREIGN)
                        walked += 1
    changed = changed_rows(before, snapshot())
    assert not unresolved, "path parameters the walk cannot fill:\n" + "\n".join(unresolved)
    assert not changed and not probe.failures, "\n".join(
        [*(["rows changed:", *changed] if changed else []), probe.report()]
    )
    assert walked > 300


@pytest.mark.django_db
def test_a_second_dimension_holds_the_same_refs_as_the_first():
    """master_ref, decision_ref, evidence_set_ref and change_ref are unique per
    Dimension: B's copies were registered under A's very refs."""
    world = fixture.build()
    assert world.ref_clashes == []


def _read(user, url: str) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return response.content.decode()


@pytest.mark.django_db
def test_a_disposal_leaves_the_other_dimensions_copies_of_the_same_text():
    """A disposed G and D (and so D2's copy of D's text); B disposed its W6. Each kept
    the other's copies, byte for byte the same, readable to its own curators."""
    world = fixture.build()
    b_reader, a_curator = world.users["other_dimension"], world.users["curator"]
    for label, groups in (
        ("D", (F.PASSAGE_EXCERPT, F.PASSAGE_TITLE)),
        ("D2", (F.PASSAGE_TITLE,)),
    ):
        body = _read(b_reader, f"/api/v1/evidence/passages/{world.passages_b[label]}/")
        assert all(fixture.marker(label, g) in body for g in groups), (label, body)
    body = _read(b_reader, f"/api/v1/groundings/{world.links_b['D']}/")
    assert fixture.marker("D", F.STATEMENT) in body
    assert fixture.marker("D", F.PASSAGE_EXCERPT) in body
    body = _read(a_curator, f"/api/v1/groundings/{world.links_a['W6']}/")
    for group in fixture.PURGED:
        assert fixture.marker("W6", group) in body, group
    # And each disposed its own copies: neither reads the disposed texts any more.
    body = _read(a_curator, f"/api/v1/evidence/passages/{world.passages_a['D2']}/")
    assert fixture.marker("D2", F.PASSAGE_TITLE) not in body
    assert fixture.marker("D", F.PASSAGE_EXCERPT) not in body
    body = _read(b_reader, f"/api/v1/evidence/passages/{world.passages_b['W6']}/")
    assert fixture.marker("W6", F.PASSAGE_EXCERPT) not in body
