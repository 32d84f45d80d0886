"""GET /api/v1/groundings/: the `ordering` allow-list (still cursor-paginated, exact
over ties) and the `display_state` filter."""

from __future__ import annotations

from grounding.models import GroundingLink
from tests.api.helpers import assess, client_for, problem, register

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
