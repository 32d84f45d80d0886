"""Bulk registration takes at most BULK_MAX_ITEMS (1,000) items (API.md "Tenancy"):
more is 400 validation_error with offender /items max_items, refused before any item
is looked at, nothing written, the refusal audited. From-citations, whose links are
registered through the same bulk body, is held to the same bound."""

from __future__ import annotations

import pytest

from grounding.bodies import BULK_MAX_ITEMS, BulkRegisterSerializer
from grounding.models import GroundingLink, StatementBinding
from policies.models import AuditEvent
from tests.api.helpers import client_for, problem, register_body
from tests.citations.helpers import external

BULK = "/api/v1/groundings/bulk/"


def test_the_bulk_bound_is_1000_items_and_the_body_declares_it():
    assert BULK_MAX_ITEMS == 1000
    assert BulkRegisterSerializer().fields["items"].max_length == 1000


def _refused_events(action: str) -> list[tuple[str, str]]:
    return list(
        AuditEvent.objects.filter(action=action, outcome="refused").values_list(
            "code", "dimension_ref"
        )
    )


@pytest.mark.parametrize("count", [BULK_MAX_ITEMS + 1, 9_500])
def test_more_than_1000_bulk_items_are_400_max_items_and_nothing_is_written(world, count):
    # The items need not even be valid: the bound is judged before any of them.
    response = client_for(world.curator).post(BULK, {"items": [{}] * count}, format="json")
    body = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [("/items", "max_items")]
    assert str(count) in body["offenders"][0]["detail"]
    assert GroundingLink.objects.count() == 0
    assert GroundingLink.history.count() == 0
    assert StatementBinding.objects.count() == 0
    assert _refused_events("register_bulk") == [("validation_error", "")]


def test_1000_bulk_items_are_registered(world):
    items = [register_body(world, external=True) for _ in range(BULK_MAX_ITEMS)]
    response = client_for(world.curator).post(BULK, {"items": items}, format="json")
    assert response.status_code == 201, response.content[:300]
    assert len(response.json()["items"]) == BULK_MAX_ITEMS
    assert GroundingLink.objects.filter(dimension=world.dimension).count() == BULK_MAX_ITEMS


@pytest.mark.urls("tests.citations.urls")
def test_from_citations_with_more_than_1000_new_links_is_refused_and_writes_nothing(world):
    count = BULK_MAX_ITEMS + 1
    text = "a" * (count + 1)
    payload = {
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": text,
                        "annotations": [
                            {
                                "type": "url_citation",
                                "start_index": i,
                                "end_index": i + 1,
                                "url": "https://example.org/many",
                                "title": "Many",
                            }
                            for i in range(count)
                        ],
                    }
                ],
            }
        ]
    }
    body = {
        "dimension": world.dimension.name,
        "profile": world.profile.ref,
        "answer_revision_ref": "urn:answer:many@1",
        "format": "openai-responses",
        "payload": payload,
        "passages": {"https://example.org/many": external("https://example.org/many")},
    }
    response = client_for(world.curator).post(
        "/api/v1/groundings/from-citations/", body, format="json"
    )
    refused = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in refused["offenders"]] == [("/payload", "max_items")]
    assert GroundingLink.objects.count() == 0
    assert _refused_events("register_from_citations") == [
        ("validation_error", world.dimension.name)
    ]
