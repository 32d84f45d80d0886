"""`anchor.anchor_result` (offsets, digests of the matched text) is part of
`anchor.selector`: withheld with it, and with `passage.excerpt` (API.md "Tenancy"),
in the link, its revisions, its projections and its page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from grounding import services
from policies import governance
from tests.api.helpers import client_for, restrict_curators_to, url

EVERY_FIELD = [
    "statement",
    "support",
    "passage.locator",
    "passage.title",
    "passage.excerpt",
    "anchor.selector",
    "assessments.verdict",
    "assessments.reviewer",
]


@pytest.fixture
def anchored(world, link):
    """The link with a recorded builtin anchor observation (revision 2)."""
    services.record_anchor_observation(
        actor=world.curator, grounding_id=link.pk, expected_revision=1, use_builtin_resolver=True
    )
    link.refresh_from_db()
    return link


def _digest(link) -> str:
    return link.current_anchor_observation.anchor_result["text_sha256"]


@pytest.mark.parametrize("withheld", ["anchor.selector", "passage.excerpt"])
def test_the_anchor_result_is_withheld_with_the_selector_or_the_excerpt(world, anchored, withheld):
    restrict_curators_to(world, [f for f in EVERY_FIELD if f != withheld])
    client = client_for(world.curator)
    for path in ("", "revisions/2/"):
        response = client.get(url(anchored.grounding_id, path))
        assert response.status_code == 200, response.content
        body = response.json()
        # The anchor keeps its profile; the resolution state stays a state.
        expected = {"selector_profile", "transformation_ref"}
        if withheld != "anchor.selector":
            expected |= {"source_selector", "context_ref"}
        assert set(body["anchor"]) == expected, path
        assert body["passage"]["resolution_state"] == "resolved"
        assert withheld in body["withheld"]
        text = response.content.decode()
        assert '"matches"' not in text and '"match_count"' not in text, path


def test_the_anchor_result_is_shown_when_selector_and_excerpt_are(world, anchored):
    restrict_curators_to(world, ["statement", "passage.excerpt", "anchor.selector"])
    body = client_for(world.curator).get(url(anchored.grounding_id)).json()
    assert body["anchor"]["anchor_result"] == {
        "status": "resolved",
        "match_count": 1,
        "matches": [{"start": 11, "end": 25}],
        "resolver_ref": anchored.current_anchor_observation.resolver_ref,
        "text_sha256": _digest(anchored),
    }


@pytest.mark.parametrize("fmt", ["native", "web-annotation", "prov-o"])
def test_a_projection_without_the_selector_carries_no_anchor_result(world, anchored, fmt):
    governance.record_disclosure_decision(
        actor=world.access_steward,
        dimension=world.dimension,
        values={
            "decision_ref": "urn:access:no-selector",
            "recipient_scope": "partner:acme",
            "purpose": "citation-display",
            "fields": ["statement", "support", "passage.excerpt", "passage.title"],
        },
    )
    response = client_for(world.projection_agent).get(
        url(anchored.grounding_id, "projection/"),
        {"recipient": "partner:acme", "purpose": "citation-display", "format": fmt},
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert "anchor.selector" in body["withheld"]
    text = response.content.decode()
    assert '"matches"' not in text and '"match_count"' not in text
    if fmt == "native":
        assert "anchor_result" not in body["fields"]["anchor"]


@pytest.mark.urls("tests.ui.urls")
@pytest.mark.parametrize("withheld", ["anchor.selector", "passage.excerpt"])
def test_the_page_shows_no_anchor_result_when_it_is_withheld(client, world, anchored, withheld):
    restrict_curators_to(world, [f for f in EVERY_FIELD if f != withheld])
    client.force_login(world.curator)
    html = client.get(reverse("grounding-page", args=[anchored.pk])).content.decode()
    assert _digest(anchored) not in html
    assert "Anchor resolved" not in html
    assert "<mark" not in html
    assert "code points 11–25" not in html


@pytest.mark.parametrize("withheld", ["anchor.selector", "passage.excerpt"])
def test_recording_an_observation_answers_no_anchor_result_the_actor_may_not_see(
    world, link, withheld
):
    restrict_curators_to(world, [f for f in EVERY_FIELD if f != withheld])
    response = client_for(world.curator).post(
        url(link.grounding_id, "anchor-observations/"),
        {"resolver": "builtin"},
        format="json",
        HTTP_IF_MATCH='"1"',
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["resolution_state"] == "resolved"
    assert "anchor_result" not in body
    assert '"text_sha256"' not in response.content.decode()


def test_recording_an_observation_answers_its_anchor_result_when_it_may_be_seen(world, link):
    response = client_for(world.curator).post(
        url(link.grounding_id, "anchor-observations/"),
        {"resolver": "builtin"},
        format="json",
        HTTP_IF_MATCH='"1"',
    )
    assert response.status_code == 201, response.content
    assert response.json()["anchor_result"]["status"] == "resolved"
