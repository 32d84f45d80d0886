"""The stream (API.md "Event feed"): members only, a JSON page with `next`, an event
stream with each event's cursor as `id:`, resumption without a gap, forged and stale
cursors refused."""

from __future__ import annotations

import json

import pytest
from django.core import signing

from feed import log_link, stream
from tests import factories
from tests.api.helpers import client_for, problem

EVENTS = "/api/v1/events/"


def _page(client, world, **params):
    log_link.integrate()  # the sequencer (a service in production) integrates the leaves
    response = client.get(EVENTS, {"dimension": world.dimension.name, **params})
    assert response.status_code == 200, response.content
    return response.json()


def _stream(client, world, **headers):
    log_link.integrate()
    return client.get(EVENTS, {"dimension": world.dimension.name},
                      HTTP_ACCEPT="text/event-stream", **headers)  # fmt: skip


def _sse(response) -> list[tuple[str, dict]]:
    text = b"".join(response.streaming_content).decode()
    events = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line
                      and not line.startswith(":"))  # fmt: skip
        if "data" in fields:
            events.append((fields["id"], json.loads(fields["data"])))
    return events


def test_members_read_a_page_and_resume_from_next(world, link):
    factories.assess(world.reviewer, link)
    client = client_for(world.reviewer)
    first = _page(client, world, limit=1)
    assert [(e["type"], e["sequence"]) for e in first["events"]] == [
        ("org.grounding.link.registered", 1)
    ]
    event = first["events"][0]
    assert event["source"] == f"urn:grounding:{world.dimension.name}"
    assert event["subject"] == event["partitionkey"] == str(link.pk)
    assert event["data"]["grounding_id"] == str(link.pk)
    second = _page(client, world, after=first["next"])
    assert [(e["type"], e["sequence"]) for e in second["events"]] == [
        ("org.grounding.link.assessed", 2)
    ]
    empty = _page(client, world, after=second["next"])
    assert empty == {"events": [], "next": second["next"]}


def test_strangers_get_not_found_as_for_an_unknown_dimension(world, link):
    a = client_for(world.outsider).get(EVENTS, {"dimension": world.dimension.name})
    b = client_for(world.outsider).get(EVENTS, {"dimension": "no-such-dimension"})
    assert problem(a, 404, "not_found") == problem(b, 404, "not_found")
    problem(client_for(world.curator).get(EVENTS), 400, "validation_error")


def test_another_dimensions_events_are_not_in_the_stream(world, link):
    other = factories.make_dimension()
    curator = factories.user_with_roles(other, "curator")
    passage = factories.make_passage(dimension=other)
    factories.register_link(curator, other, world.profile, passage)
    events = _page(client_for(world.curator), world)["events"]
    assert [e["subject"] for e in events] == [str(link.pk)]


@pytest.mark.parametrize(
    "cursor",
    ["garbage", "1-0-1:forged", signing.Signer(salt="other").sign("1-0-1")],
)
def test_a_forged_cursor_is_a_400_problem(world, link, cursor):
    body = problem(
        client_for(world.curator).get(EVENTS, {"dimension": world.dimension.name,
                                               "after": cursor}),
        400,
        "invalid_cursor",
    )  # fmt: skip
    assert [o["pointer"] for o in body["offenders"]] == ["/query/after"]


def test_a_stale_or_foreign_cursor_is_a_400_problem(world, link):
    log_link.integrate()
    first = stream.page(world.dimension, None, 1)[0][1]
    from feed.models import Event

    pk = Event.objects.get(event_id=first["id"]).pk
    wrong_index = stream.cursor_of(world.dimension.pk, first["logindex"] + 5, pk)
    stale = stream.cursor_of(world.dimension.pk, 0, 10**9)
    foreign = stream.cursor_of(world.dimension.pk + 1, 0, 1)
    for cursor in (stale, foreign, wrong_index):
        response = client_for(world.curator).get(
            EVENTS, {"dimension": world.dimension.name}, HTTP_LAST_EVENT_ID=cursor
        )
        body = problem(response, 400, "invalid_cursor")
        assert [o["pointer"] for o in body["offenders"]] == ["/headers/Last-Event-ID"]


def test_the_event_stream_resumes_after_last_event_id_without_a_gap(world, settings):
    settings.GROUNDING_STREAM_WSGI_SECONDS = 0
    links = [factories.register_link(world.curator, world.dimension, world.profile,
                                     world.passage) for _ in range(3)]  # fmt: skip
    client = client_for(world.curator)
    response = _stream(client, world)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    seen = _sse(response)
    assert [e["subject"] for _, e in seen] == [str(link.pk) for link in links]
    # Dropped after the second; more writes; resumed with Last-Event-ID.
    factories.assess(world.reviewer, links[0])
    resumed = _sse(_stream(client, world, HTTP_LAST_EVENT_ID=seen[1][0]))
    got = [e for _, e in seen[:2]] + [e for _, e in resumed]
    assert [(e["subject"], e["sequence"]) for e in got] == [
        (str(links[0].pk), 1), (str(links[1].pk), 1), (str(links[2].pk), 1),
        (str(links[0].pk), 2),
    ]  # fmt: skip
    assert len({e["id"] for e in got}) == 4
    # Each event is its leaf: the Dimension's log indexes, contiguous from the first.
    indexes = [e["logindex"] for e in got]
    assert indexes == list(range(indexes[0], indexes[0] + 4))


def test_the_events_cover_exactly_the_logs_leaves(world, link):
    """A consumer's completeness check: the logindexes it received are exactly the
    leaves of the log between two checkpoints (here: all of them)."""
    from policies import governance
    from transparency.models import Leaf

    factories.assess(world.reviewer, link)
    governance.record_disclosure_decision(
        actor=world.access_steward,
        dimension=world.dimension,
        values={"decision_ref": "urn:access:cover", "recipient_scope": "partner:x",
                "purpose": "citation-display", "fields": ["statement"]},
    )  # fmt: skip
    events = _page(client_for(world.curator), world, limit=500)["events"]
    leaves = Leaf.objects.filter(log__dimension=world.dimension, index__isnull=False)
    assert sorted({e["logindex"] for e in events}) == sorted(leaves.values_list("index", flat=True))
    assert [(e["type"], e["sequence"]) for e in events] == [
        ("org.grounding.link.registered", 1),
        ("org.grounding.link.assessed", 2),
        ("org.grounding.decision.recorded", 1),
    ]
