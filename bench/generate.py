"""Realistic inputs for the benchmark: register payloads and WSP v3 responses."""

from __future__ import annotations

import random
from typing import Any

from bench.app import projected_text

WORDS = [
    "bridge",
    "river",
    "opened",
    "span",
    "harbour",
    "council",
    "minutes",
    "engineer",
    "steel",
    "cable",
    "tower",
    "Zürich",
    "Köln",
    "façade",
    "naïve",
    "café",
    "Straße",
    "東京",
    "München",
    "São",
    "Paulo",
    "déjà",
    "vu",
    "survey",
    "load",
    "report",
    "archive",
    "municipal",
    "construction",
    "1932",
    "1933",
    "inspection",
]


def sentence(rng: random.Random, words: int = 14) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def passage_text(rng: random.Random, sentences: int = 6) -> str:
    return " ".join(sentence(rng) for _ in range(sentences))


def register_payload(index: int, *, passage_id: str | None = None) -> dict[str, Any]:
    passage: dict[str, Any]
    if passage_id:
        passage = {"passage_id": passage_id}
    else:
        passage = {
            "passage_ref": f"urn:bench:passage:{index}",
            "source_revision_binding": {
                "source_ref": f"https://example.org/doc/{index % 997}",
                "revision": "etag:abc",
                "media_type": "text/html",
                "language": "en",
            },
        }
    return {
        "dimension": "demo",
        "profile": "wm-mem-016@1.0.0",
        "owner_ref": "role:grounding-curator",
        "statement": {
            "statement_ref": f"urn:answer:{index}#s1",
            "answer_revision_ref": f"urn:answer:{index}@1",
            "answer_selector": {
                "type": "TextPositionSelector",
                "start": index % 400,
                "end": index % 400 + 48,
            },
            "answer_representation": {"language": "en", "media_type": "text/plain"},
            "claim_scope": {"proposition": f"The bridge opened in {1900 + index % 120}."},
            "rebind_requirement": "none",
        },
        "passage": passage,
        "anchor": {
            # Selectors differ per link, as they do in real answers.
            "source_selector": {
                "type": "TextQuoteSelector",
                "exact": f"opened in {1900 + index % 120}",
                "prefix": f"The bridge {WORDS[index % len(WORDS)]} ",
                "suffix": ".",
            },
            "selector_profile": "nfc-codepoint-halfopen@1",
        },
        "support": {
            "support_kind": ("quotation", "paraphrase", "inferential", "contextual")[index % 4],
            "support_scope": {"covers": "opening year"},
            "use_basis": "post_generation",
        },
        "time": {
            "asserted_at": "2026-11-30T12:00:00Z",
            "time_uncertainty": {"asserted_at": "second"},
        },
    }


def wsp_response(execution: int, rng: random.Random, observations: int = 20) -> dict[str, Any]:
    attempt_id = f"att-{execution}-1"
    obs = []
    results = []
    for index in range(observations):
        observation_id = f"{attempt_id}:{index}"
        url = f"https://docs.example.org/{execution}/{index}"
        text = passage_text(rng, 3)
        obs.append(
            {
                "observation_id": observation_id,
                "provider_attempt_id": attempt_id,
                "provider_result_index": index,
                "provider": "exa",
                "endpoint_id": "exa.search.v1",
                "kind": "search_result",
                "url": {"observed": url + "?utm=1", "canonical": url},
                "title": sentence(rng, 5),
                "snippet": text,
                "text": None,
                "provider_rank": index + 1,
                "provider_score": {"value": 1 - index / 100, "semantics": "unknown"},
                "published_at": {"raw": "2025-03-01", "normalized": "2025-03-01T00:00:00Z"},
                "provider_fields": {"exa": {"author": "Staff"}},
            }
        )
        results.append(
            {
                "result_id": f"r-{execution}-{index}",
                "kind": "search_result",
                "engine_rank": index + 1,
                "representative_observation_id": observation_id,
                "observation_ids": [observation_id],
                "url": {"observed": url + "?utm=1", "canonical": url},
                "title": None,
                "snippet": projected_text(text, observation_id, "snippet"),
                "text": None,
            }
        )
    return {
        "contract_version": "3.0",
        "request_id": f"req-{execution}",
        "execution_id": f"exec-bench-{execution}",
        "capability": "search",
        "status": "ok",
        "engine": {"name": "wsp", "version": "3.0.0", "build_commit": "abc1234"},
        "provider_attempts": [
            {
                "attempt_id": attempt_id,
                "provider": "exa",
                "endpoint_id": "exa.search.v1",
                "decision": "attempted",
                "skip_reason": None,
                "tries": [
                    {
                        "try_number": 1,
                        "started_at": "2026-11-30T12:00:00Z",
                        "duration_ms": 420,
                        "outcome": "success",
                        "error": None,
                    }
                ],
            }
        ],
        "observations": obs,
        "results": results,
        "policy_actions": [],
        "source_diversity": {
            "method": "host-count",
            "method_version": "1",
            "method_degraded": False,
            "provider_count": 1,
            "host_count": 1,
            "source_family_count": 1,
            "unique_cluster_count": observations,
        },
        "cache_status": {
            "disposition": "miss",
            "age_seconds": 0,
            "origin_execution_id": None,
            "source_contract_version": "3.0",
        },
        "routing_receipt": {"route": "default"},
    }
