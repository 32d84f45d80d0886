"""GET …/revisions/ and …/revisions/{n}/: history with actor and reason, and each
past revision exactly as GET returned it then (under today's disclosure)."""

from tests import factories
from tests.api.helpers import (
    assess,
    builtin_observation,
    client_for,
    if_match,
    problem,
    restrict_curators_to,
    url,
)


def _without_withheld(document: dict) -> dict:
    return {k: v for k, v in document.items() if k != "withheld"}


def _life_cycle(world, grounding_id) -> dict[int, dict]:
    """Run a link through its operations, capturing GET after each revision."""
    reader = client_for(world.curator)
    captured = {1: reader.get(url(grounding_id)).json()}

    def step(response):
        assert response.status_code in (200, 201), response.content
        revision = int(response["ETag"].strip('"'))
        captured[revision] = reader.get(url(grounding_id)).json()
        assert captured[revision]["revision"] == revision

    curator = client_for(world.curator)
    step(builtin_observation(world, grounding_id, 1))
    step(assess(world, grounding_id, 2))
    step(
        curator.patch(
            url(grounding_id),
            {"support": {"support_kind": "paraphrase"}, "revision_reason": "paraphrase"},
            format="json",
            **if_match(3),
        )
    )
    step(assess(world, grounding_id, 4, verdict="partial"))
    step(
        curator.patch(
            url(grounding_id),
            {
                "statement": {**factories.BASE_PAYLOAD["statement"], "statement_ref": "urn:s:2"},
                "revision_reason": "moved",
            },
            format="json",
            **if_match(5),
        )
    )
    step(
        curator.post(
            url(grounding_id, "withdrawal/"),
            {"reason": "retracted", "authority_ref": "urn:policy:r"},
            format="json",
            **if_match(6),
        )
    )
    return captured


def test_each_past_revision_reads_exactly_as_get_returned_it(world, link):
    captured = _life_cycle(world, link.grounding_id)
    assert sorted(captured) == [1, 2, 3, 4, 5, 6, 7]
    client = client_for(world.curator)
    for revision, expected in captured.items():
        response = client.get(url(link.grounding_id, f"revisions/{revision}/"))
        assert response.status_code == 200
        assert response["ETag"] == f'"{revision}"'
        assert _without_withheld(response.json()) == _without_withheld(expected), revision
    # The states moved as the operations said, and the past kept them.
    states = {n: (d["display_state"], d["recheck_state"]) for n, d in captured.items()}
    assert states == {
        1: ("unassessed", "current"),
        2: ("unassessed", "current"),
        3: ("visible", "current"),
        4: ("unassessed", "stale"),
        5: ("visible", "current"),
        6: ("unassessed", "stale"),
        7: ("withdrawn", "withdrawn"),
    }


def test_revisions_lists_one_entry_per_revision_with_actor_and_reason(world, link):
    _life_cycle(world, link.grounding_id)
    response = client_for(world.reviewer).get(url(link.grounding_id, "revisions/"))
    assert response.status_code == 200
    assert response["ETag"] == '"7"'
    body = response.json()
    assert body["revision"] == 7
    entries = body["results"]
    assert [e["revision"] for e in entries] == [1, 2, 3, 4, 5, 6, 7]
    curator, reviewer = world.curator.username, world.reviewer.username
    assert [e["actor"] for e in entries] == [
        curator,
        curator,
        reviewer,
        curator,
        reviewer,
        curator,
        curator,
    ]
    assert entries[0]["reason"] == "registered as a candidate"
    assert entries[3]["reason"] == "paraphrase"
    assert entries[5]["reason"] == "moved"
    assert entries[6]["reason"] == "withdrawn: retracted"
    assert all(e["recorded_at"].endswith("Z") for e in entries)


def test_a_past_revision_is_shown_under_todays_disclosure(world, link):
    restrict_curators_to(world, ["support"])
    body = client_for(world.curator).get(url(link.grounding_id, "revisions/1/")).json()
    assert "statement" not in body
    assert "statement" in body["withheld"]


def test_an_unknown_revision_is_404(world, link):
    client = client_for(world.curator)
    problem(client.get(url(link.grounding_id, "revisions/9/")), 404, "not_found")
    problem(client.get(url(link.grounding_id, "revisions/99999999999999999999/")), 404, "not_found")


def test_revisions_need_a_reader(world, link):
    problem(client_for(world.outsider).get(url(link.grounding_id, "revisions/")), 404,
            "not_found")  # fmt: skip
    problem(
        client_for(world.projection_agent).get(url(link.grounding_id, "revisions/1/")),
        403,
        "disclosure_not_decided",
    )
