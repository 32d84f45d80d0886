"""Cross-field rules on observations (§2, §10) and policy actions (§5)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from common.kernel.canonical import canonical_json
from common.kernel.refusals import Offender, pointer_join
from evidence.wsp.context import DocumentIndex, as_list

PROVIDER_FIELDS_MAX_BYTES = 4096
PROVIDER_FIELDS_RESPONSE_MAX_BYTES = 131072

# §5: the closed action → reason pairs of 3.0.
ACTION_REASONS: dict[str, frozenset[str]] = {
    "excluded": frozenset({"spam_domain"}),
    "reranked": frozenset({"intent_authority"}),
    "demoted": frozenset({"domain_diversity"}),
    "selected_as_representative": frozenset({"dedup_representative"}),
    "truncated_by_limit": frozenset({"max_results", "max_content_bytes"}),
}

ALL_REASONS = frozenset().union(*ACTION_REASONS.values())

# §2 presence rules: the field that carries the literal text, and the one that is null.
PRESENCE = {"search_result": ("snippet", "text"), "extracted_document": ("text", "snippet")}


def serialized_size(value: Any) -> int:
    """UTF-8 bytes of the compact, key-sorted JSON form (the contract's size measure)."""
    return len(canonical_json(value).encode())


def observation_offenders(document: dict, index: DocumentIndex) -> Iterator[Offender]:
    seen_ids: set[str] = set()
    seen_results: set[tuple[str, int]] = set()
    total_size = 0
    for i, obs in enumerate(as_list(document.get("observations"))):
        if not isinstance(obs, dict):
            continue
        base = pointer_join("/observations", i)
        obs_id = obs.get("observation_id")
        if isinstance(obs_id, str):
            if obs_id in seen_ids:
                yield Offender(
                    pointer_join(base, "observation_id"),
                    "duplicate_observation_id",
                    "observation_id is unique within a response",
                )
            seen_ids.add(obs_id)

        attempt_id = obs.get("provider_attempt_id")
        result_index = obs.get("provider_result_index")
        if isinstance(attempt_id, str) and isinstance(result_index, int):
            if (attempt_id, result_index) in seen_results:
                yield Offender(
                    pointer_join(base, "provider_result_index"),
                    "duplicate_provider_result",
                    "(provider_attempt_id, provider_result_index) is unique",
                )
            seen_results.add((attempt_id, result_index))
        # §10 waiver: cache-served observations name the origin execution's attempt.
        if (
            isinstance(attempt_id, str)
            and not index.cache_hit
            and (attempt_id not in index.attempt_ids)
        ):
            yield Offender(
                pointer_join(base, "provider_attempt_id"),
                "fk_unresolved",
                "provider_attempt_id names no provider_attempts[].attempt_id",
            )

        yield from _presence(obs, base)
        fields = obs.get("provider_fields")
        if isinstance(fields, dict):
            yield from _provider_fields(obs, fields, base)
            try:
                total_size += serialized_size(fields)
            except (TypeError, ValueError):  # not JSON data: the schema reports it
                continue
    if total_size > PROVIDER_FIELDS_RESPONSE_MAX_BYTES:
        yield Offender(
            "/observations",
            "provider_fields_response_too_large",
            f"provider_fields total {total_size} bytes > {PROVIDER_FIELDS_RESPONSE_MAX_BYTES}",
        )


def _presence(obs: dict, base: str) -> Iterator[Offender]:
    kind = obs.get("kind")
    # A kind that is not a string is schema.type's to report, not a crash here.
    if not isinstance(kind, str) or kind not in PRESENCE:
        return
    literal, absent = PRESENCE[kind]
    # A missing key is schema.required; only present keys are judged here.
    if literal in obs and not isinstance(obs[literal], str):
        yield Offender(
            pointer_join(base, literal), "presence_rule", f"a {kind} carries {literal} as a string"
        )
    if absent in obs and obs[absent] is not None:
        yield Offender(pointer_join(base, absent), "presence_rule", f"a {kind} has {absent} null")


def _provider_fields(obs: dict, fields: dict, base: str) -> Iterator[Offender]:
    provider = obs.get("provider")
    for key in fields:
        # Without a provider id the schema already refuses the observation.
        if isinstance(provider, str) and key != provider:
            yield Offender(
                pointer_join(base, "provider_fields", key),
                "provider_fields_key",
                "provider_fields has one key: the observation's own provider",
            )
    try:
        size = serialized_size(fields)
    except (TypeError, ValueError):
        return
    if size > PROVIDER_FIELDS_MAX_BYTES:
        yield Offender(
            pointer_join(base, "provider_fields"),
            "provider_fields_too_large",
            f"{size} bytes > {PROVIDER_FIELDS_MAX_BYTES}",
        )


def policy_action_offenders(document: dict, index: DocumentIndex) -> Iterator[Offender]:
    for i, action in enumerate(as_list(document.get("policy_actions"))):
        if not isinstance(action, dict):
            continue
        base = pointer_join("/policy_actions", i)
        name, reason = action.get("action"), action.get("reason")
        # An unknown action or reason is schema.enum; only known-but-mismatched pairs here.
        if (
            isinstance(name, str)
            and isinstance(reason, str)
            and name in ACTION_REASONS
            and reason in ALL_REASONS
            and reason not in ACTION_REASONS[name]
        ):
            yield Offender(
                pointer_join(base, "reason"),
                "policy_action_pair",
                f"{name} admits only {', '.join(sorted(ACTION_REASONS[name]))}",
            )
        obs_id = action.get("observation_id")
        if isinstance(obs_id, str) and obs_id not in index.observations:
            yield Offender(
                pointer_join(base, "observation_id"),
                "policy_action_observation_unresolved",
                "names no observation of this response",
            )
