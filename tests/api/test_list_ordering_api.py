"""GET /api/v1/groundings/: the `ordering` allow-list (still cursor-paginated, exact
over ties) and the `display_state` filter."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from grounding.api.filters import ORDERINGS
from grounding.models import GroundingLink
from policies import governance
from policies.choices import Role
from tests import factories
from tests.api.helpers import assess, client_for, problem, register
from tests.conftest import requires_postgres

LIST = "/api/v1/groundings/"


def walk(client, params) -> tuple[list[str], int]:
    """Every id of the list, following `next` links; and the number of pages."""
    page = client.get(LIST, params).json()
    seen: list[str] = []
    pages = 1
    while True:
        seen += [item["grounding_id"] for item in page["results"]]
        if page["next"] is None:
            return seen, pages
        page = client.get(page["next"]).json()
        pages += 1


def walk_back(client, params) -> list[str]:
    """From the last page back to the first, following `previous` links."""
    page = client.get(LIST, params).json()
    while page["next"] is not None:
        page = client.get(page["next"]).json()
    seen = [item["grounding_id"] for item in page["results"]]
    while page["previous"] is not None:
        page = client.get(page["previous"]).json()
        seen = [item["grounding_id"] for item in page["results"]] + seen
    return seen


def test_ordering_by_revision_pages_exactly_over_ties(world):
    ids = [register(world)["grounding_id"] for _ in range(6)]
    for grounding_id in ids[1:3]:
        assert assess(world, grounding_id, 1).status_code == 201  # now at revision 2
    client = client_for(world.curator)
    revision = {str(k): v for k, v in GroundingLink.objects.values_list("pk", "revision")}
    expected = sorted(ids, key=lambda i: (revision[i], i))
    seen, pages = walk(client, {"ordering": "revision", "page_size": 2})
    assert (seen, pages) == (expected, 3)
    assert walk_back(client, {"ordering": "revision", "page_size": 2}) == expected
    descending = sorted(ids, key=lambda i: (revision[i], i), reverse=True)
    assert walk(client, {"ordering": "-revision", "page_size": 4})[0] == descending
    assert walk_back(client, {"ordering": "-revision", "page_size": 4}) == descending


def test_ordering_by_observed_at_and_by_registration(world):
    ids = [register(world)["grounding_id"] for _ in range(5)]
    client = client_for(world.curator)
    observed = {str(k): v for k, v in GroundingLink.objects.values_list("pk", "observed_at")}
    oldest_first = sorted(ids, key=lambda i: (observed[i], i))
    assert walk(client, {"ordering": "observed_at", "page_size": 2})[0] == oldest_first
    assert walk(client, {"ordering": "-observed_at", "page_size": 2})[0] == oldest_first[::-1]
    assert walk(client, {"ordering": "grounding_id", "page_size": 3})[0] == sorted(ids)
    assert walk(client, {"page_size": 3})[0] == sorted(ids, reverse=True)
    # The next link keeps the ordering it was made for.
    page = client.get(LIST, {"ordering": "observed_at", "page_size": 2}).json()
    assert "ordering=observed_at" in page["next"]


def test_an_ordering_outside_the_allow_list_is_refused_without_echoing(world):
    for value in ("owner_ref", "current_statement__statement_ref", "SECRET-ORDER"):
        response = client_for(world.curator).get(LIST, {"ordering": value})
        body = problem(response, 400, "validation_error")
        assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [
            ("/ordering", "invalid_choice")
        ]
        assert value not in response.content.decode()


def test_a_cursor_made_for_another_ordering_is_refused(world):
    for _ in range(3):
        register(world)
    client = client_for(world.curator)
    page = client.get(LIST, {"ordering": "revision", "page_size": 1}).json()
    cursor = page["next"].split("cursor=")[1].split("&")[0]
    response = client.get(LIST, {"cursor": cursor, "ordering": "observed_at", "page_size": 1})
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_display_state_filter(world):
    visible = register(world)["grounding_id"]
    unassessed = register(world)["grounding_id"]
    assert assess(world, visible, 1).status_code == 201
    client = client_for(world.curator)
    found = walk(client, {"display_state": "visible"})[0]
    assert found == [visible]
    assert walk(client, {"display_state": "unassessed"})[0] == [unassessed]
    response = client.get(LIST, {"display_state": "shown"})
    body = problem(response, 400, "validation_error")
    assert body["offenders"][0]["pointer"] == "/display_state"
    # Combined with an ordering, still the same set.
    assert walk(client, {"display_state": "visible", "ordering": "revision"})[0] == [visible]


# The index each ordering walks within a Dimension (grounding/models/link.py).
ORDER_INDEXES = {
    "-grounding_id": "link_dim_order_idx",
    "grounding_id": "link_dim_order_idx",
    "-observed_at": "link_dim_observed_idx",
    "observed_at": "link_dim_observed_idx",
    "-revision": "link_dim_revision_idx",
    "revision": "link_dim_revision_idx",
}


def page_plans(client, params) -> tuple[dict, dict]:
    """EXPLAIN (FORMAT JSON) of the statement that reads the list's first page, and of
    the one that reads the page its `next` cursor names."""
    plans = []
    url, query = LIST, params
    for _ in range(2):
        with CaptureQueriesContext(connection) as ctx:
            page = client.get(url, query).json()
        (sql,) = [
            q["sql"]
            for q in ctx.captured_queries
            if 'FROM "grounding_groundinglink"' in q["sql"] and " LIMIT " in q["sql"]
        ]
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}")
            (row,) = cursor.fetchall()
        plans.append((row[0] if isinstance(row[0], list) else json.loads(row[0]))[0]["Plan"])
        url, query = page["next"], None
    return plans[0], plans[1]


def nodes(plan: dict):
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)


def link_scans(plan: dict) -> list[tuple[str, str | None, str]]:
    """(node type, index, index condition) of each read of the link table."""
    return [
        (n["Node Type"], n.get("Index Name"), n.get("Index Cond", ""))
        for n in nodes(plan)
        if n.get("Relation Name") == "grounding_groundinglink"
    ]


@requires_postgres
@pytest.mark.parametrize("ordering", list(ORDERINGS))
def test_each_ordering_walks_its_index_within_the_dimension_and_stops_at_the_page(world, ordering):
    for _ in range(3):
        register(world)
    client = client_for(world.curator)
    with connection.cursor() as cursor:
        # Only a walk of an index in the list's order avoids a Sort now; a table this
        # small would otherwise be read whole and sorted whatever its indexes.
        cursor.execute("SET enable_sort = off")
        cursor.execute("SET enable_seqscan = off")
    try:
        for params in ({"ordering": ordering}, {"ordering": ordering, "record_state": "candidate"}):
            first, after_cursor = page_plans(client, {**params, "page_size": 1})
            for plan in (first, after_cursor):
                assert plan["Node Type"] == "Limit"
                assert not [
                    n for n in nodes(plan) if n["Node Type"] in ("Sort", "Incremental Sort")
                ]
                ((kind, index, _),) = link_scans(plan)
                assert (kind, index) == ("Index Scan", ORDER_INDEXES[ordering]), params
            (_, _, cond), column = link_scans(after_cursor)[0], ordering.lstrip("-")
            # The cursor's position is where the walk starts (an index condition), not a
            # filter over every row before it.
            if column == "grounding_id":
                assert f"grounding_id {'<' if ordering[0] == '-' else '>'}" in cond, cond
            else:
                assert f"ROW({column}, grounding_id) {'<' if ordering[0] == '-' else '>'}" in cond
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET enable_sort")
            cursor.execute("RESET enable_seqscan")


@pytest.fixture
def two_dimensions(world):
    """The curator holds the role in a second Dimension too; links in both."""
    other = factories.make_dimension()
    governance.grant_role(actor=None, dimension=other, user=world.curator, role=Role.CURATOR)
    passage = factories.make_passage(dimension=other)
    ids = [register(world)["grounding_id"] for _ in range(3)]
    ids += [
        str(factories.register_link(world.curator, other, world.profile, passage).pk)
        for _ in range(3)
    ]
    for grounding_id in ids[1:3]:
        assert assess(world, grounding_id, 1).status_code == 201  # now at revision 2
    return ids


@pytest.mark.parametrize("ordering", list(ORDERINGS))
def test_a_reader_of_two_dimensions_pages_through_both_in_each_ordering(
    world, two_dimensions, ordering
):
    client = client_for(world.curator)
    column = ordering.lstrip("-")
    value = {str(k): v for k, v in GroundingLink.objects.values_list("pk", column)}
    expected = sorted(two_dimensions, key=lambda i: (value[i], i))
    if ordering.startswith("-"):
        expected.reverse()
    assert walk(client, {"ordering": ordering, "page_size": 2}) == (expected, 3)
    assert walk_back(client, {"ordering": ordering, "page_size": 2}) == expected
    # Named, one Dimension's links only, in the same order.
    own = [i for i in expected if i in two_dimensions[:3]]
    named = {"ordering": ordering, "page_size": 2, "dimension": world.dimension.name}
    assert walk(client, named) == (own, 2)


@requires_postgres
@pytest.mark.parametrize("ordering", list(ORDERINGS))
def test_a_reader_of_two_dimensions_walks_each_dimensions_index(world, two_dimensions, ordering):
    client = client_for(world.curator)
    with connection.cursor() as cursor:
        # Tables this small would otherwise be read whole (or by bitmap) whatever
        # their indexes.
        cursor.execute("SET enable_seqscan = off")
        cursor.execute("SET enable_bitmapscan = off")
    try:
        for plan in page_plans(client, {"ordering": ordering, "page_size": 2}):
            assert plan["Node Type"] == "Limit"
            scans = link_scans(plan)
            # Each Dimension's first keys from its own index, in order; then the page
            # by primary key among them: no bitmap of both Dimensions' links to sort.
            walks = [s for s in scans if s[1] == ORDER_INDEXES[ordering] and "= ANY" not in s[2]]
            assert len(walks) == 2, scans
            by_keys = [s for s in scans if s not in walks]
            assert by_keys and all("grounding_id = ANY" in cond for _, _, cond in by_keys), scans
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET enable_seqscan")
            cursor.execute("RESET enable_bitmapscan")
