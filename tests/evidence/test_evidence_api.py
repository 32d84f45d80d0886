"""REST: POST /api/v1/evidence/wsp-imports/ and GET /api/v1/evidence/passages/."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from evidence.models import Passage, RetrievalObservation
from tests.evidence.conftest import client_for, load

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.evidence.urls")]

IMPORTS = "/api/v1/evidence/wsp-imports/"
PASSAGES = "/api/v1/evidence/passages/"


def test_first_import_is_201_and_an_identical_replay_is_200_with_the_same_report(curator):
    client = client_for(curator)
    first = client.post(IMPORTS, load("search"), format="json")
    assert first.status_code == 201
    body = first.json()
    assert body["execution_id"] == "exec-search-001"
    assert body["observations"] == {"received": 3, "created": 3, "duplicates": 0}
    assert body["novelty_score"] == 100
    assert len(body["passages"]) == 3

    replay = client.post(IMPORTS, load("search"), format="json")
    assert replay.status_code == 200
    assert replay.json() == body
    assert RetrievalObservation.objects.count() == 1
    assert Passage.objects.count() == 3


def test_contract_violation_is_422_problem_json_listing_every_offender(curator):
    doc = load("search")
    doc["observations"][2]["provider_attempt_id"] = "att-9"
    doc["policy_actions"][0]["reason"] = "max_results"
    response = client_for(curator).post(IMPORTS, doc, format="json")

    assert response.status_code == 422
    assert response["Content-Type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["code"] == "wsp_contract_violation"
    assert problem["status"] == 422
    assert [(o["pointer"], o["code"]) for o in problem["offenders"]] == [
        ("/observations/2/provider_attempt_id", "fk_unresolved"),
        ("/policy_actions/0/reason", "policy_action_pair"),
    ]
    assert RetrievalObservation.objects.count() == 0
    assert Passage.objects.count() == 0


def test_banned_field_is_422_with_code_banned_field(curator):
    doc = load("search")
    doc["full_synthesis"] = "The bridge opened in 1932."
    response = client_for(curator).post(IMPORTS, doc, format="json")
    assert response.status_code == 422
    assert response.json()["code"] == "banned_field"
    assert response.json()["offenders"][0]["pointer"] == "/full_synthesis"
    # An error never echoes the restricted content it refused.
    assert "opened in 1932" not in response.content.decode()


def test_a_changed_document_for_a_stored_execution_is_409_execution_conflict(curator):
    client = client_for(curator)
    assert client.post(IMPORTS, load("search"), format="json").status_code == 201
    changed = load("search")
    changed["request_id"] = "req-another"
    response = client.post(IMPORTS, changed, format="json")
    assert response.status_code == 409
    assert response.json()["code"] == "execution_conflict"


def test_import_unauthenticated_is_401():
    response = APIClient().post(IMPORTS, load("search"), format="json")
    assert response.status_code == 401


def test_import_without_the_curator_role_is_403_role_required(reviewer):
    response = client_for(reviewer).post(IMPORTS, load("search"), format="json")
    assert response.status_code == 403
    assert response.json()["code"] == "role_required"


def test_passages_unauthenticated_is_401():
    assert APIClient().get(PASSAGES).status_code == 401


def test_passages_without_any_role_is_403_role_required(outsider):
    response = client_for(outsider).get(PASSAGES)
    assert response.status_code == 403
    assert response.json()["code"] == "role_required"


def test_passages_of_an_inactive_dimension_member_are_403(reviewer, dimension):
    dimension.is_active = False
    dimension.save()
    assert client_for(reviewer).get(PASSAGES).status_code == 403


@pytest.fixture
def imported(curator):
    client = client_for(curator)
    reports = {}
    for name in ("search", "extract", "cache_hit"):
        response = client.post(IMPORTS, load(name), format="json")
        assert response.status_code == 201
        reports[name] = response.json()
    return reports


def test_passage_list_is_cursor_paginated(imported, curator):
    client = client_for(curator)
    first = client.get(PASSAGES, {"page_size": 2}).json()
    assert set(first) == {"next", "previous", "results"}
    assert len(first["results"]) == 2
    assert first["previous"] is None
    seen = [p["passage_id"] for p in first["results"]]
    page = first
    while page["next"]:
        page = client.get(page["next"]).json()
        seen += [p["passage_id"] for p in page["results"]]
    assert len(seen) == len(set(seen)) == 5
    # Newest first (passage ids are time-ordered UUIDv7).
    assert seen == sorted(seen, reverse=True)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"execution_id": "exec-search-001"}, {"obs-1", "obs-2", "obs-3"}),
        ({"canonical_url": "https://example.org/bridge"}, {"obs-1", "obs-2", "obs-c1"}),
        ({"canonical_url": "https://example.org/cafe"}, {"obs-x1"}),
    ],
)
def test_passage_list_filters(imported, curator, query, expected):
    results = client_for(curator).get(PASSAGES, query).json()["results"]
    assert {p["observation_id"] for p in results} == expected


def test_passage_list_filters_on_content_sha256(imported, curator):
    # The cache hit re-served obs-2's snippet: one digest, two occurrences.
    digest = Passage.objects.get(observation_id="obs-c1").content_sha256
    results = client_for(curator).get(PASSAGES, {"content_sha256": digest}).json()["results"]
    assert sorted(p["observation_id"] for p in results) == ["obs-2", "obs-c1"]
    by_obs = {p["observation_id"]: p for p in results}
    assert by_obs["obs-c1"]["duplicate_of"] == by_obs["obs-2"]["passage_id"]


def test_passage_detail_renders_every_field(imported, curator):
    passage_id = imported["search"]["passages"][2]["passage_id"]
    body = client_for(curator).get(f"{PASSAGES}{passage_id}/").json()
    source = load("search")["observations"][2]
    assert body.pop("created_at")
    assert body == {
        "passage_id": passage_id,
        "passage_ref": "urn:wsp:exec-search-001:obs-3",
        "dimension": Passage.objects.get(passage_id=passage_id).dimension.name,
        "kind": "search_result",
        "source_field": "snippet",
        "locator": "https://news.example.com/harbour",
        "observed_url": "https://news.example.com/harbour",
        "canonical_url": "https://news.example.com/harbour",
        "title": "Harbour news",
        "text": source["snippet"],
        "content_sha256": Passage.objects.get(passage_id=passage_id).content_sha256,
        "media_type": "text/plain",
        "language": "",
        "access_label": "public",
        "execution_id": "exec-search-001",
        "observation_id": "obs-3",
        "provider": "tavily",
        "endpoint_id": "tavily.search",
        "provider_attempt_id": "att-1",
        "provider_result_index": 2,
        "provider_rank": 3,
        "provider_score": None,
        "published_at": None,
        "provider_fields": {},
        "duplicate_of": None,
        "document_id": None,
        "page": None,
        "retrieval_observation": {
            "import_id": imported["search"]["import_id"],
            "execution_id": "exec-search-001",
            "cache_status": load("search")["cache_status"],
            "policy_actions": [
                {
                    "action": "truncated_by_limit",
                    "observation_id": "obs-3",
                    "reason": "max_content_bytes",
                }
            ],
        },
        "withheld": [],
    }


def test_passage_detail_keeps_score_and_dates(imported, curator):
    passage_id = imported["search"]["passages"][0]["passage_id"]
    body = client_for(curator).get(f"{PASSAGES}{passage_id}/").json()
    assert body["provider_score"] == {"value": 0.92, "semantics": "provider_local_relevance"}
    assert body["published_at"] == {"raw": "2024-05-01", "normalized": "2024-05-01T00:00:00Z"}
    assert body["text"] == "The bridge opened in 1932.  It spans\tthe bay."


def test_unknown_passage_is_404(curator):
    response = client_for(curator).get(f"{PASSAGES}01890000-0000-7000-8000-000000000000/")
    assert response.status_code == 404


def test_passage_list_makes_a_fixed_number_of_queries(
    imported, curator, django_assert_max_num_queries
):
    client = client_for(curator)
    # token, the reader's roles and decisions, the page, and the shared throttle counter
    # (database cache: read, then count + savepoint + select + insert + release);
    # independent of the number of passages.
    with django_assert_max_num_queries(10):
        response = client.get(PASSAGES)
    assert len(response.json()["results"]) == 5
