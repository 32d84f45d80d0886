"""One broken twin per WSP v3 rule: each breaks exactly one rule and is located.

The test asserts the complete offender list, so a twin that trips a second rule
(noise) or none (a vacuous test) fails.
"""

from __future__ import annotations

import hashlib
import unicodedata

import pytest

from tests.evidence.conftest import load, offenders_of


def reproject(projected: dict, text: str) -> None:
    """Give a ProjectedTextV3 new text with a matching hash and one covering segment."""
    projected["text"] = text
    projected["text_sha256"] = hashlib.sha256(text.encode()).hexdigest()
    normalized = unicodedata.normalize("NFC", text)
    projected["segments"] = [{"start": 0, "end": len(normalized), "text": normalized}]


# -- mutations: each breaks exactly one rule ---------------------------------------


def _set(path, value):
    def mutate(doc):
        *parents, last = path
        node = doc
        for part in parents:
            node = node[part]
        node[last] = value

    return mutate


def _delete(path):
    def mutate(doc):
        *parents, last = path
        node = doc
        for part in parents:
            node = node[part]
        del node[last]

    return mutate


def _extra_observation_with_same_id(doc):
    clone = dict(doc["observations"][2], provider_result_index=3)
    doc["observations"].append(clone)


def _many_large_provider_fields(doc):
    for i in range(35):
        doc["observations"].append(
            dict(
                doc["observations"][2],
                observation_id=f"obs-big-{i}",
                provider_result_index=10 + i,
                provider_fields={"tavily": {"blob": "x" * 3900}},
            )
        )


def _shift_second_segment(doc):
    segment = doc["results"][0]["snippet"]["segments"][1]
    text = doc["results"][0]["snippet"]["text"]
    segment["start"] = 28
    segment["text"] = text[28 : segment["end"]]


def _overshoot_last_segment(doc):
    segment = doc["results"][0]["snippet"]["segments"][1]
    segment["end"] += 1


def _nfc_segments_for_literal_nfd_text(doc):
    projected = doc["results"][0]["text"]
    normalized = unicodedata.normalize("NFC", projected["text"])
    projected["segments"] = [{"start": 0, "end": len(normalized), "text": normalized}]


def _title_changed(doc):
    reproject(doc["results"][1]["title"], "Harbour News")


def _snippet_not_a_prefix(doc):
    source = doc["observations"][2]["snippet"]
    reproject(doc["results"][1]["snippet"], source[1:61])


def _aggregate_joined_wrongly(doc):
    snippet = doc["results"][0]["snippet"]
    fragments = snippet["provenance"]["fragments"]
    reproject(snippet, "\n".join(f["text"] for f in fragments))


def _aggregate_repeats_a_fragment(doc):
    snippet = doc["results"][0]["snippet"]
    fragments = snippet["provenance"]["fragments"]
    fragments.append(dict(fragments[0]))
    reproject(snippet, "\n\n".join(f["text"] for f in fragments))


def _aggregate_fragment_rewritten(doc):
    snippet = doc["results"][0]["snippet"]
    fragments = snippet["provenance"]["fragments"]
    fragments[0]["text"] = "Bridge opened."  # a rewrite of "Bridge opened in 1932."
    reproject(snippet, "\n\n".join(f["text"] for f in fragments))


def _aggregate_as_title(doc):
    doc["results"][0]["title"] = dict(doc["results"][0]["snippet"])


def _skipped_with_a_try(doc):
    doc["provider_attempts"][1]["tries"] = list(doc["provider_attempts"][0]["tries"])


def _drop_truncation_action(index):
    def mutate(doc):
        del doc["policy_actions"][index]

    return mutate


def _snippet_without_whitespace_norm(doc):
    doc["results"][0]["snippet"]["provenance"]["transformations"] = ["mechanical_segmentation"]


TWINS = [
    # banned fields (§0, §1, §8)
    ("search", _set(["answer"], "The bridge opened in 1932."), "/answer", "banned_field"),
    ("search", _set(["timing"], {"total_ms": 5}), "/timing", "banned_field"),
    (
        "search",
        _set(["observations", 0, "provider_fields", "tavily", "claim"], "x"),
        "/observations/0/provider_fields/tavily/claim",
        "banned_field",
    ),
    (
        "search",
        _set(["routing_receipt", "extra"], {"type": "synthesis", "text": "…"}),
        "/routing_receipt/extra",
        "banned_field",
    ),
    (
        "search",
        _set(["source_diversity", "source_independence_estimate"], 0.8),
        "/source_diversity/source_independence_estimate",
        "banned_field",
    ),
    # JSON Schema
    ("search", _delete(["execution_id"]), "/execution_id", "schema.required"),
    ("search", _set(["contract_version"], "3.0.0"), "/contract_version", "schema.const"),
    ("search", _set(["capability"], "answer"), "/capability", "schema.enum"),
    (
        "search",
        _set(["observations", 0, "provider_rank"], "1"),
        "/observations/0/provider_rank",
        "schema.type",
    ),
    (
        "search",
        _set(["results", 0, "canonical_url"], "https://example.org/bridge"),
        "/results/0/canonical_url",
        "schema.additional_properties",
    ),
    (
        "search",
        _set(["provider_attempts", 0, "tries", 0, "started_at"], "yesterday"),
        "/provider_attempts/0/tries/0/started_at",
        "schema.pattern",
    ),
    (
        "search",
        _set(["source_diversity", "host_count"], -1),
        "/source_diversity/host_count",
        "schema.minimum",
    ),
    # observations (§2, §10)
    (
        "search",
        _set(["observations", 2, "provider_attempt_id"], "att-9"),
        "/observations/2/provider_attempt_id",
        "fk_unresolved",
    ),
    (
        "cache_hit",
        _set(["cache_status", "disposition"], "miss"),
        "/observations/0/provider_attempt_id",
        "fk_unresolved",
    ),
    (
        "search",
        _extra_observation_with_same_id,
        "/observations/3/observation_id",
        "duplicate_observation_id",
    ),
    (
        "search",
        _set(["observations", 1, "provider_result_index"], 0),
        "/observations/1/provider_result_index",
        "duplicate_provider_result",
    ),
    ("search", _set(["observations", 0, "text"], "x"), "/observations/0/text", "presence_rule"),
    (
        "search",
        _set(["observations", 1, "snippet"], None),
        "/observations/1/snippet",
        "presence_rule",
    ),
    (
        "extract",
        _set(["observations", 0, "snippet"], "x"),
        "/observations/0/snippet",
        "presence_rule",
    ),
    (
        "search",
        _set(["observations", 0, "provider_fields"], {"exa": {"favicon": "x"}}),
        "/observations/0/provider_fields/exa",
        "provider_fields_key",
    ),
    (
        "search",
        _set(["observations", 0, "provider_fields"], {"tavily": {"blob": "é" * 2100}}),
        "/observations/0/provider_fields",
        "provider_fields_too_large",
    ),
    ("search", _many_large_provider_fields, "/observations", "provider_fields_response_too_large"),
    # results (§3)
    (
        "search",
        _set(["results", 0, "observation_ids"], ["obs-1", "obs-2", "obs-9"]),
        "/results/0/observation_ids/2",
        "result_ref_unresolved",
    ),
    (
        "search",
        _set(["results", 1, "title", "provenance", "observation_id"], "obs-9"),
        "/results/1/title/provenance/observation_id",
        "result_ref_unresolved",
    ),
    (
        "search",
        _set(["results", 0, "representative_observation_id"], "obs-3"),
        "/results/0/representative_observation_id",
        "representative_not_member",
    ),
    (
        "search",
        _delete(["results", 0, "dedup_cluster_id"]),
        "/results/0/dedup_cluster_id",
        "dedup_cluster_id_missing",
    ),
    (
        "search",
        _set(["results", 1, "observation_ids"], ["obs-3", "obs-3"]),
        "/results/1/observation_ids/1",
        "observation_ids_duplicate",
    ),
    # projected text (§3, §4)
    (
        "search",
        _set(["results", 0, "title", "text_sha256"], hashlib.sha256(b"other").hexdigest()),
        "/results/0/title/text_sha256",
        "text_sha256_mismatch",
    ),
    (
        "search",
        _shift_second_segment,
        "/results/0/snippet/segments/1/start",
        "segments_not_contiguous",
    ),
    (
        "search",
        _delete(["results", 0, "snippet", "segments", 1]),
        "/results/0/snippet/segments",
        "segments_not_covering",
    ),
    (
        "search",
        _set(["results", 0, "snippet", "segments", 0, "text"], "X" * 27),
        "/results/0/snippet/segments/0/text",
        "segment_text_mismatch",
    ),
    (
        "search",
        _overshoot_last_segment,
        "/results/0/snippet/segments/1/end",
        "segment_range_invalid",
    ),
    (
        "extract",
        _nfc_segments_for_literal_nfd_text,
        "/results/0/text/segments",
        "segments_concat_mismatch",
    ),
    ("search", _title_changed, "/results/1/title/text", "projection_source_mismatch"),
    (
        "search",
        _set(["results", 0, "title", "provenance", "observation_id"], "obs-2"),
        "/results/0/title/provenance/source_field",
        "projection_source_mismatch",
    ),
    (
        "search",
        _snippet_without_whitespace_norm,
        "/results/0/snippet/text",
        "projection_source_mismatch",
    ),
    ("search", _snippet_not_a_prefix, "/results/1/snippet/text", "projection_source_mismatch"),
    (
        "search",
        _drop_truncation_action(1),
        "/results/1/snippet/provenance/transformations",
        "truncation_without_policy_action",
    ),
    # §3.1 aggregate
    ("aggregate", _aggregate_joined_wrongly, "/results/0/snippet/text", "aggregate_mismatch"),
    (
        "aggregate",
        _aggregate_repeats_a_fragment,
        "/results/0/snippet/provenance/fragments/2",
        "aggregate_fragment_duplicate",
    ),
    (
        "aggregate",
        _set(["results", 0, "snippet", "provenance", "fragments", 0, "observation_id"], "obs-zz"),
        "/results/0/snippet/provenance/fragments/0/observation_id",
        "result_ref_unresolved",
    ),
    (
        "aggregate",
        _aggregate_fragment_rewritten,
        "/results/0/snippet/provenance/fragments/0/text",
        "projection_source_mismatch",
    ),
    (
        "aggregate",
        _drop_truncation_action(1),
        "/results/0/snippet/provenance/fragments/1/transformations",
        "truncation_without_policy_action",
    ),
    (
        "aggregate",
        _set(["results", 0, "snippet", "origin"], "provider"),
        "/results/0/snippet/origin",
        "aggregate_origin",
    ),
    ("aggregate", _aggregate_as_title, "/results/0/title/provenance", "aggregate_not_snippet"),
    # policy actions (§5)
    (
        "search",
        _set(["policy_actions", 0, "reason"], "max_results"),
        "/policy_actions/0/reason",
        "policy_action_pair",
    ),
    (
        "search",
        _set(["policy_actions", 0, "observation_id"], "obs-9"),
        "/policy_actions/0/observation_id",
        "policy_action_observation_unresolved",
    ),
    # provider attempts (§6)
    (
        "search",
        _set(["provider_attempts", 1, "skip_reason"], None),
        "/provider_attempts/1/skip_reason",
        "attempt_skipped_inconsistent",
    ),
    ("search", _skipped_with_a_try, "/provider_attempts/1/tries", "attempt_skipped_inconsistent"),
    (
        "search",
        _set(["provider_attempts", 0, "skip_reason"], "rate_limited"),
        "/provider_attempts/0/skip_reason",
        "attempt_skipped_inconsistent",
    ),
    (
        "search",
        _set(["provider_attempts", 0, "tries"], []),
        "/provider_attempts/0/tries",
        "attempt_without_tries",
    ),
    (
        "search",
        _set(["provider_attempts", 1, "attempt_id"], "att-1"),
        "/provider_attempts/1/attempt_id",
        "duplicate_attempt_id",
    ),
    # envelope (§1, §10, docs/wsp.md)
    ("search", _delete(["engine", "build_commit"]), "/engine/build_commit", "engine_partial"),
    ("search", _set(["status"], "failed"), "/error", "error_presence"),
    (
        "search",
        _set(["error"], {"error_class": "provider_error", "code": "x", "message": "m"}),
        "/error",
        "error_presence",
    ),
    (
        "cache_hit",
        _set(["cache_status", "origin_execution_id"], None),
        "/cache_status/origin_execution_id",
        "cache_origin_missing",
    ),
    (
        "cache_hit",
        _set(["cache_status", "origin_execution_id"], "exec-cache-002"),
        "/execution_id",
        "execution_id_not_fresh",
    ),
]


@pytest.mark.parametrize(
    ("fixture", "mutate", "pointer", "code"),
    TWINS,
    ids=[f"{code}@{pointer}" for _, _, pointer, code in TWINS],
)
def test_broken_twin_is_refused_with_its_pointer_and_code(fixture, mutate, pointer, code):
    doc = load(fixture)
    mutate(doc)
    assert offenders_of(doc) == [(pointer, code)]
