"""A list's cursor names a position in one ordering: sent with another ordering it is
404 not_found (docs/api.md "Lists"), whichever two orderings, even the same column in
the other direction (#26: such a cursor was accepted and paged from a wrong place)."""

from __future__ import annotations

import base64
from itertools import permutations
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from grounding.api.filters import ORDERINGS
from tests.api.helpers import client_for, problem, register

LIST = "/api/v1/groundings/"


def _cursor(client, ordering: str) -> str:
    page = client.get(LIST, {"ordering": ordering, "page_size": 1}).json()
    return parse_qs(urlparse(page["next"]).query)["cursor"][0]


@pytest.fixture
def cursors(world) -> dict[str, str]:
    for _ in range(3):
        register(world)
    client = client_for(world.curator)
    return {ordering: _cursor(client, ordering) for ordering in ORDERINGS}


def test_a_cursor_is_404_under_every_other_ordering(world, cursors):
    client = client_for(world.curator)
    answers = {}
    for made, used in permutations(ORDERINGS, 2):
        response = client.get(LIST, {"cursor": cursors[made], "ordering": used, "page_size": 1})
        answers[(made, used)] = (response.status_code, response.json().get("code"))
    assert {pair: answer for pair, answer in answers.items() if answer != (404, "not_found")} == {}
    problem(
        client.get(LIST, {"cursor": cursors["revision"], "ordering": "-revision"}), 404, "not_found"
    )


def test_a_cursor_still_pages_under_its_own_ordering(world, cursors):
    client = client_for(world.curator)
    for ordering, cursor in cursors.items():
        response = client.get(LIST, {"cursor": cursor, "ordering": ordering, "page_size": 1})
        assert response.status_code == 200, ordering
        assert len(response.json()["results"]) == 1


@pytest.mark.parametrize(
    "path",
    [LIST, "/api/v1/evidence/passages/", "/api/v1/audit-events/", "/api/v1/change-notifications/"],
)
@pytest.mark.parametrize("position", ["not-a-position", "-grounding_id|not-a-uuid", "²", ""])
def test_a_cursor_whose_position_its_list_cannot_read_is_404(world, path, position):
    cursor = base64.b64encode(urlencode({"p": position}).encode()).decode()
    response = client_for(world.steward).get(path, {"cursor": cursor})
    problem(response, 404, "not_found")
