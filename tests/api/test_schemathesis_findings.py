"""Regressions of what `make schemathesis` found (issue 26 item 5), each reproduced as
the request it sent: a schema-valid request refused by a rule the schema did not
state, or a schema-violating one answered 2xx."""

from __future__ import annotations

import pytest

from tests.api.helpers import client_for, problem


@pytest.mark.parametrize(
    ("role", "path", "name"),
    [
        ("curator", "/api/v1/groundings/", "passage_id"),
        ("curator", "/api/v1/groundings/", "record_state"),
        ("curator", "/api/v1/groundings/", "ordering"),
        ("steward", "/api/v1/audit-events/", "grounding_id"),
        ("steward", "/api/v1/audit-events/", "outcome"),
    ],
)
def test_an_empty_uuid_or_enum_filter_is_refused_not_skipped(world, link, role, path, name):
    """`GET /api/v1/groundings/?passage_id=` was 200 (django-filter skips an empty
    value) although the schema's uuid format excludes the empty string."""
    response = client_for(getattr(world, role)).get(path, {name: ""})
    body = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [(f"/{name}", "blank")]


def test_an_empty_free_text_filter_still_matches_everything(world, link):
    response = client_for(world.curator).get("/api/v1/groundings/", {"statement_ref": ""})
    assert response.status_code == 200
    assert [r["grounding_id"] for r in response.json()["results"]] == [str(link.grounding_id)]
