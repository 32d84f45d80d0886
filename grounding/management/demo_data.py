"""Demo evidence and links for `seed_demo`: one WSP v3 extract response and three
links in different states, all written through the services' bodies, inside
seed_demo's one transaction (policies.actions)."""

from __future__ import annotations

from typing import Any

from evidence.models import Passage
from evidence.services.wsp_import import do_import_wsp_document
from evidence.wsp.builders import projected_text
from grounding import services
from grounding.models import GroundingLink

DEMO_EXECUTION = "exec-demo-0001"
DOCUMENTS = [
    (
        "https://example.org/harbour-bridge",
        "Harbour bridge history",
        "The harbour bridge opened in 1932 after eight years of work. "
        "Its steel arch spans 503 metres across the harbour.",
    ),
    (
        "https://example.org/council-minutes",
        "Council minutes, 1931–1933",
        "Minutes record that the bridge opened in 1932. A later entry repeats: "
        "the bridge opened in 1932, with a public holiday declared.",
    ),
]


def demo_wsp_response() -> dict[str, Any]:
    observations, results = [], []
    for index, (url, title, text) in enumerate(DOCUMENTS):
        observation_id = f"att-demo-1:{index}"
        observations.append(
            {
                "observation_id": observation_id,
                "provider_attempt_id": "att-demo-1",
                "provider_result_index": index,
                "provider": "demo-reader",
                "endpoint_id": "demo-reader.extract",
                "kind": "extracted_document",
                "url": {"observed": url, "canonical": url},
                "title": title,
                "snippet": None,
                "text": text,
                "provider_rank": index + 1,
                "provider_score": None,
                "published_at": None,
                "provider_fields": {},
            }
        )
        results.append(
            {
                "result_id": f"res-demo-{index}",
                "kind": "extracted_document",
                "engine_rank": index + 1,
                "representative_observation_id": observation_id,
                "observation_ids": [observation_id],
                "url": {"observed": url, "canonical": url},
                "title": None,
                "snippet": None,
                "text": projected_text(text, observation_id, "text"),
            }
        )
    return {
        "contract_version": "3.0",
        "request_id": "req-demo-0001",
        "execution_id": DEMO_EXECUTION,
        "capability": "extract",
        "status": "ok",
        "provider_attempts": [
            {
                "attempt_id": "att-demo-1",
                "provider": "demo-reader",
                "endpoint_id": "demo-reader.extract",
                "decision": "attempted",
                "skip_reason": None,
                "tries": [
                    {
                        "try_number": 1,
                        "started_at": "2026-11-30T12:00:00Z",
                        "duration_ms": 120,
                        "outcome": "success",
                        "error": None,
                    }
                ],
            }
        ],
        "observations": observations,
        "results": results,
        "policy_actions": [],
        "source_diversity": {
            "method": "host_family",
            "method_version": "1",
            "method_degraded": False,
            "provider_count": 1,
            "host_count": 1,
            "source_family_count": 1,
            "unique_cluster_count": 2,
        },
        "cache_status": {
            "disposition": "miss",
            "age_seconds": None,
            "origin_execution_id": None,
            "source_contract_version": "3.0",
        },
        "routing_receipt": {"route": "extract.default"},
    }


def _payload(passage: Passage, statement: str, exact: str) -> dict[str, Any]:
    return {
        "dimension": "demo",
        "profile": "wm-mem-016@1.0.0",
        "owner_ref": "role:grounding-curator",
        "statement": {
            "statement_ref": f"urn:answer:demo#{statement}",
            "answer_revision_ref": "urn:answer:demo@1",
            "answer_selector": {"type": "TextPositionSelector", "start": 0, "end": 40},
            "answer_representation": {"language": "en", "media_type": "text/plain"},
            "claim_scope": {"proposition": "The harbour bridge opened in 1932."},
            "rebind_requirement": "none",
        },
        "passage": {"passage_id": str(passage.passage_id)},
        "anchor": {
            "source_selector": {"type": "TextQuoteSelector", "exact": exact},
            "selector_profile": "nfc-codepoint-halfopen@1",
        },
        "support": {
            "support_kind": "quotation",
            "support_scope": {"covers": "opening year"},
            "use_basis": "post_generation",
        },
        "time": {
            "asserted_at": "2026-11-30T12:00:00Z",
            "time_uncertainty": {"asserted_at": "second"},
        },
    }


def _assess(actor, link: GroundingLink, verdict: str, ref: str) -> None:
    services.do_bind_assessment(
        actor=actor,
        grounding_id=link.pk,
        expected_revision=link.revision,
        assessment={
            "assessment_ref": ref,
            "reviewer_ref": "urn:reviewer:demo",
            "reviewer_kind": "automated",
            "authority_ref": "urn:policy:demo:review@1",
            "method_ref": "urn:method:nli@2",
            "verdict": verdict,
            "assessed_inputs": {"grounding_revision": link.revision},
            "assessed_at": "2026-11-30T12:05:00Z",
        },
    )


def load(*, curator, reviewer) -> int:
    """Import the demo evidence and register three links, inside the caller's
    transaction; does nothing the second time."""
    if GroundingLink.objects.filter(dimension__name="demo").exists():
        return 0
    do_import_wsp_document(actor=curator, document=demo_wsp_response(), dimension="demo")
    bridge, minutes = (
        Passage.objects.get(execution_id=DEMO_EXECUTION, observation_id=f"att-demo-1:{i}")
        for i in range(2)
    )
    visible = services.do_register(actor=curator, payload=_payload(bridge, "s1", "opened in 1932"))
    services.do_record_anchor_observation(
        actor=curator, grounding_id=visible.pk, expected_revision=1, use_builtin_resolver=True
    )
    _assess(reviewer, GroundingLink.objects.get(pk=visible.pk), "supporting", "urn:eval:demo/1")
    ambiguous = services.do_register(
        actor=curator, payload=_payload(minutes, "s2", "the bridge opened in 1932")
    )
    services.do_record_anchor_observation(
        actor=curator, grounding_id=ambiguous.pk, expected_revision=1, use_builtin_resolver=True
    )
    disputed = services.do_register(actor=curator, payload=_payload(bridge, "s3", "steel arch"))
    _assess(reviewer, disputed, "supporting", "urn:eval:demo/2")
    _assess(reviewer, GroundingLink.objects.get(pk=disputed.pk), "conflicting", "urn:eval:demo/3")
    return 3
