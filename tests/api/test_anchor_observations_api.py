"""POST /api/v1/groundings/{id}/anchor-observations/ (curator or reviewer, If-Match)."""

import hashlib
import unicodedata

from grounding.models import AnchorObservation
from tests import factories
from tests.api.helpers import builtin_observation, client_for, if_match, pointers, problem, url

TEXT = "The bridge opened in 1932. It spans the river."
SHA = hashlib.sha256(unicodedata.normalize("NFC", TEXT).encode()).hexdigest()


def post_observation(world, link, observation: dict):
    """POST `observation` as the reviewer, at revision 1."""
    return client_for(world.reviewer).post(
        url(link.grounding_id, "anchor-observations/"), observation, format="json", **if_match(1)
    )


def test_the_builtin_resolver_records_a_resolved_anchor(world, link):
    response = builtin_observation(world, link.grounding_id, 1)
    assert response.status_code == 201
    assert response["ETag"] == '"2"'
    body = response.json()
    assert body["revision"] == 2
    assert body["resolution_state"] == "resolved"
    assert body["anchor_result"]["status"] == "resolved"
    assert body["anchor_result"]["match_count"] == 1
    assert body["anchor_result"]["matches"] == [{"start": 11, "end": 25}]
    assert body["link"]["passage"]["resolution_state"] == "resolved"
    assert body["link"]["anchor"]["anchor_result"] == body["anchor_result"]
    assert AnchorObservation.objects.get(pk=body["observation_id"]).recorded_revision == 2


def test_a_supplied_ambiguous_observation_is_recorded_as_such(world, link):
    observation = {
        "status": "ambiguous",
        "match_count": 2,
        "matches": [{"start": 0, "end": 3}, {"start": 27, "end": 29}],
        "resolver_ref": "urn:resolver:partner@3",
        "text_sha256": SHA,
    }
    response = post_observation(world, link, observation)
    assert response.status_code == 201
    body = response.json()
    assert body["resolution_state"] == "ambiguous"
    assert body["resolver_ref"] == "urn:resolver:partner@3"
    assert body["link"]["passage"]["resolution_state"] == "ambiguous"


def test_an_inconsistent_supplied_observation_is_refused_with_pointers(world, link):
    observation = {
        "status": "resolved",
        "match_count": 1,
        "matches": [],
        "resolver_ref": "urn:resolver:partner@3",
        "text_sha256": SHA,
    }
    response = post_observation(world, link, observation)
    body = problem(response, 400, "validation_error")
    assert pointers(body) == ["/match_count"]
    assert AnchorObservation.objects.count() == 0


def test_an_observation_of_another_text_is_refused(world, link):
    observation = {
        "status": "unresolved",
        "match_count": 0,
        "matches": [],
        "resolver_ref": "urn:resolver:partner@3",
        "text_sha256": "0" * 64,
    }
    response = post_observation(world, link, observation)
    problem(response, 409, "anchor_input_mismatch")


def test_the_builtin_resolver_needs_local_text(world):
    external = factories.register_link(world.curator, world.dimension, world.profile)
    problem(builtin_observation(world, external.grounding_id, 1), 409, "anchor_text_unavailable")


def test_a_builtin_request_names_no_observation_and_no_other_resolver(world, link):
    client = client_for(world.curator)
    body = problem(
        client.post(
            url(link.grounding_id, "anchor-observations/"),
            {"resolver": "builtin", "match_count": 1},
            format="json",
            **if_match(1),
        ),
        400,
        "validation_error",
    )
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [
        ("/match_count", "unknown_field")
    ]
    body = problem(
        client.post(
            url(link.grounding_id, "anchor-observations/"),
            {"resolver": "remote"},
            format="json",
            **if_match(1),
        ),
        400,
        "validation_error",
    )
    assert pointers(body) == ["/resolver"]


def test_an_anchor_observation_needs_curator_or_reviewer(world, link):
    response = client_for(world.projection_agent).post(
        url(link.grounding_id, "anchor-observations/"),
        {"resolver": "builtin"},
        format="json",
        **if_match(1),
    )
    problem(response, 403, "role_required")
