"""Existence oracles across tenants (API.md "Tenancy"): a caller with no role in a
Dimension gets, for its resources, exactly what it gets for an id that does not
exist: the same status, the same body, the same audit event and the same queries
(count and SQL shape, so the timing tells nothing either).

The per-link and per-set routes are walked from the URLconf, so a route added later
is held to the same rule without a new test."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from grounding.api import urls as grounding_urls
from grounding.models import GroundingLink
from grounding.services import create_evidence_set
from policies.choices import Role
from policies.models import AuditEvent
from tests import factories
from tests.api.helpers import client_for, problem

ALL_ROLES = (
    Role.CURATOR,
    Role.REVIEWER,
    Role.STEWARD,
    Role.ACCESS_STEWARD,
    Role.PROJECTION_AGENT,
)
LINK_ROUTE = "groundings/<uuid:grounding_id>/"
SET_ROUTE = "evidence-sets/<path:ref>/"
# Query parameters every GET carries (the projection needs them; others ignore them).
READ_QUERY = {"recipient": "partner:acme", "purpose": "citation-display"}
# Bodies that pass each view's own parsing, so the request reaches the lookup; a
# route not named here is sent {"reason": "probe"}.
BODIES = {
    ("link-detail", "patch"): {"revision_reason": "probe"},
    ("link-anchor-observations", "post"): {"resolver": "builtin"},
    ("evidence-set-members", "post"): {
        "grounding_id": str(uuid.uuid4()),
        "membership_role": "premise",
    },
}
METHODS = ("get", "post", "put", "patch", "delete")


@dataclass
class Tenants:
    a: object
    b: object
    profile: object
    caller: object  # every role in A, none elsewhere
    link_a: GroundingLink
    link_b: GroundingLink  # Dimension B, active
    link_c: GroundingLink  # Dimension C, inactive
    passage_b: object


@pytest.fixture
def tenants(db) -> Tenants:
    a, b, c = (factories.make_dimension() for _ in range(3))
    profile = factories.make_profile()
    caller = factories.user_with_roles(a, *ALL_ROLES)
    curator_b = factories.user_with_roles(b, Role.CURATOR)
    curator_c = factories.user_with_roles(c, Role.CURATOR)
    passage_a = factories.make_passage(dimension=a)
    passage_b = factories.make_passage(dimension=b)
    link_a = factories.register_link(caller, a, profile, passage_a)
    link_b = factories.register_link(curator_b, b, profile, passage_b)
    link_c = factories.register_link(curator_c, c, profile, factories.make_passage(dimension=c))
    for dimension, curator, link in ((b, curator_b, link_b), (c, curator_c, link_c)):
        create_evidence_set(
            actor=curator,
            values={
                "evidence_set_ref": f"urn:set:{dimension.name}/only",
                "dimension": dimension.name,
                "members": [{"grounding_id": str(link.pk), "membership_role": "premise"}],
            },
        )
    # An inactive Dimension: its preconditions must not be read for an outsider either.
    c.is_active = False
    c.save()
    return Tenants(a, b, profile, caller, link_a, link_b, link_c, passage_b)


def _routes(prefix: str) -> list[tuple[str, str, str]]:
    """(name, route, method) of every grounding API route under `prefix`."""
    found = []
    for pattern in grounding_urls.urlpatterns:
        route = str(pattern.pattern)
        if not route.startswith(prefix):
            continue
        view = pattern.callback.view_class
        found += [(pattern.name, route, m) for m in METHODS if hasattr(view, m)]
    return found


LINK_ROUTES = _routes(LINK_ROUTE)
SET_ROUTES = _routes(SET_ROUTE)


def test_the_walk_finds_every_per_link_and_per_set_route():
    assert {(name, method) for name, _, method in LINK_ROUTES} >= {
        ("link-detail", "get"),
        ("link-detail", "patch"),
        ("link-assessments", "post"),
        ("link-anchor-observations", "post"),
        ("link-withdrawal", "post"),
        ("link-disposal", "post"),
        ("link-revisions", "get"),
        ("link-revision", "get"),
        ("link-projection", "get"),
    }
    assert {(name, method) for name, _, method in SET_ROUTES} >= {
        ("evidence-set-detail", "get"),
        ("evidence-set-members", "post"),
        ("evidence-set-member", "delete"),
    }


def _shape(sql: str) -> str:
    """A statement with its literals taken out: what it asks, not of which row."""
    sql = re.sub(r"'(?:[^']|'')*'", "?", sql)
    sql = re.sub(r'"s\d+_x\d+"', '"savepoint"', sql)  # Django numbers its savepoints
    return re.sub(r"\b\d+(?:\.\d+)?\b", "?", sql)


def _path(route: str, **values: str) -> str:
    path = route
    for key, value in values.items():
        path = re.sub(rf"<(?:\w+:)?{key}>", value, path)
    return "/api/v1/" + re.sub(r"<int:\w+>", "1", path)


def _probe(client, name: str, route: str, method: str, marks: dict[str, str], **values: str):
    """One request; its status, its body and audit events with `values` masked, and
    the shapes of the statements it ran."""
    path = _path(route, **values)
    before = set(AuditEvent.objects.values_list("pk", flat=True))
    with CaptureQueriesContext(connection) as queries:
        if method == "get":
            response = client.get(path, READ_QUERY)
        else:
            body = BODIES.get((name, method), {"reason": "probe"})
            response = client.generic(
                method.upper(),
                path,
                json.dumps(body),
                content_type="application/json",
                HTTP_IF_MATCH='"1"',
            )
    text = response.content.decode()
    events = [
        (e.action, e.outcome, e.code, e.grounding_id is None)
        for e in AuditEvent.objects.exclude(pk__in=before).order_by("pk")
    ]
    for value, mark in marks.items():
        text = text.replace(value, mark)
    return response.status_code, text, events, [_shape(q["sql"]) for q in queries]


def _filed_under(client, name: str, route: str, method: str, **values: str) -> list[str]:
    """The Dimensions the refused events of one request are filed under."""
    before = set(AuditEvent.objects.values_list("pk", flat=True))
    _probe(client, name, route, method, {}, **values)
    return list(
        AuditEvent.objects.exclude(pk__in=before)
        .order_by("pk")
        .values_list("dimension_ref", flat=True)
    )


def _unknown_link_id() -> str:
    while True:
        candidate = str(uuid.uuid4())
        if not GroundingLink.objects.filter(pk=candidate).exists():
            return candidate


@pytest.mark.parametrize("foreign", ["active", "inactive"])
@pytest.mark.parametrize(("name", "route", "method"), LINK_ROUTES)
def test_unknown_and_foreign_link_ids_take_the_same_queries_and_answers(
    tenants, name, route, method, foreign
):
    client = client_for(tenants.caller)
    other = str((tenants.link_b if foreign == "active" else tenants.link_c).pk)
    unknown = _unknown_link_id()
    marks = {other: "<id>", unknown: "<id>"}
    # A first request warms whatever one request per client does once.
    _probe(client, name, route, method, {}, grounding_id=_unknown_link_id())
    foreign_answer = _probe(client, name, route, method, marks, grounding_id=other)
    unknown_answer = _probe(client, name, route, method, marks, grounding_id=unknown)
    status, text, events, queries = foreign_answer
    assert status == 404, text
    assert json.loads(text)["code"] == "not_found"
    assert foreign_answer[:3] == unknown_answer[:3]
    assert events and all(event[1] == "refused" for event in events), events
    assert len(queries) == len(unknown_answer[3])
    assert queries == unknown_answer[3]


@pytest.mark.parametrize(("name", "route", "method"), LINK_ROUTES)
def test_a_refusal_for_another_tenants_link_is_filed_under_no_dimension(
    tenants, name, route, method
):
    client = client_for(tenants.caller)
    filed = _filed_under(client, name, route, method, grounding_id=str(tenants.link_b.pk))
    assert filed == [""]


@pytest.mark.parametrize("foreign", ["active", "inactive"])
@pytest.mark.parametrize(("name", "route", "method"), SET_ROUTES)
def test_unknown_and_foreign_set_refs_take_the_same_queries_and_answers(
    tenants, name, route, method, foreign
):
    client = client_for(tenants.caller)
    dimension = tenants.b if foreign == "active" else tenants.link_c.dimension
    other = f"urn:set:{dimension.name}/only"
    unknown = f"urn:set:{dimension.name}/none"
    member = str((tenants.link_b if foreign == "active" else tenants.link_c).pk)
    marks = {other: "<ref>", unknown: "<ref>"}
    _probe(client, name, route, method, {}, ref="urn:set:warm-up", grounding_id=member)
    foreign_answer = _probe(client, name, route, method, marks, ref=other, grounding_id=member)
    unknown_answer = _probe(client, name, route, method, marks, ref=unknown, grounding_id=member)
    status, text, events, queries = foreign_answer
    assert status == 404, text
    assert json.loads(text)["code"] == "not_found"
    assert foreign_answer[:3] == unknown_answer[:3]
    assert events and all(event[1] == "refused" for event in events), events
    assert queries == unknown_answer[3]
    assert _filed_under(client, name, route, method, ref=other, grounding_id=member) == [""]


# -- a register body naming a Dimension of no role of the caller's


def _register_answer(client, body: dict, marks: dict[str, str], *, bulk: bool):
    path = "/api/v1/groundings/bulk/" if bulk else "/api/v1/groundings/"
    before = set(AuditEvent.objects.values_list("pk", flat=True))
    with CaptureQueriesContext(connection) as queries:
        response = client.post(path, {"items": [body]} if bulk else body, format="json")
    text = response.content.decode()
    for value, mark in marks.items():
        text = text.replace(value, mark)
    events = [
        (e.action, e.outcome, e.code, e.dimension_ref)
        for e in AuditEvent.objects.exclude(pk__in=before).order_by("pk")
    ]
    return response, text, events, [_shape(q["sql"]) for q in queries]


@pytest.mark.parametrize("bulk", [False, True], ids=["single", "bulk"])
def test_a_passage_id_answers_alike_whether_it_exists_in_a_dimension_of_no_role_or_not(
    tenants, bulk
):
    client = client_for(tenants.caller)
    theirs = str(tenants.passage_b.passage_id)
    nowhere = str(uuid.uuid4())
    # A first request warms what a process caches once (the profile).
    _register_answer(client, factories.link_payload(tenants.a, tenants.profile), {}, bulk=bulk)
    answers = {}
    for named in ("no-such-dimension", tenants.b.name):
        for passage_id in (theirs, nowhere):
            body = factories.link_payload(tenants.a, tenants.profile)
            body["dimension"] = named
            body["passage"] = {"passage_id": passage_id}
            marks = {theirs: "<passage>", nowhere: "<passage>", named: "<dimension>"}
            answers[named, passage_id] = _register_answer(client, body, marks, bulk=bulk)
    first = next(iter(answers.values()))
    response = first[0]
    body = problem(response, 400, "validation_error")
    at = "/items/0" if bulk else ""
    # The passage is judged only against a Dimension of the caller's: here none.
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [
        (f"{at}/dimension", "unknown_reference")
    ]
    # The refused event is filed under no Dimension: the caller holds no role in any named.
    assert first[2] == [
        ("register_bulk" if bulk else "register", "refused", "validation_error", "")
    ]
    for key, (answer, text, events, queries) in answers.items():
        assert answer.status_code == 400, key
        assert text == first[1], key
        assert events == first[2], key
        assert queries == first[3], key
    # Only the warm-up registered.
    assert GroundingLink.objects.filter(dimension=tenants.a).count() == 2


def test_a_passage_of_another_dimension_answers_as_an_unknown_id_in_the_callers_own(tenants):
    client = client_for(tenants.caller)
    _register_answer(client, factories.link_payload(tenants.a, tenants.profile), {}, bulk=False)
    answers = []
    for passage_id in (str(tenants.passage_b.passage_id), str(uuid.uuid4())):
        body = factories.link_payload(tenants.a, tenants.profile)
        body["passage"] = {"passage_id": passage_id}
        marks = {passage_id: "<passage>"}
        answers.append(_register_answer(client, body, marks, bulk=False))
    (theirs, *_), (nowhere, *_) = answers
    body = problem(theirs, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [
        ("/passage/passage_id", "unknown_reference")
    ]
    assert answers[0][1:] == answers[1][1:]
    assert nowhere.status_code == 400
