"""Lookups shared by the cross-field rules, built once per document.

Every rule runs even when the JSON Schema already failed, so these lookups are
defensive: anything of the wrong type is simply skipped (the schema reports it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CACHE_HITS = frozenset({"fresh_hit", "stale_hit"})


def as_list(value: Any) -> list:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


@dataclass
class DocumentIndex:
    observations: dict[str, dict] = field(default_factory=dict)
    attempt_ids: set[str] = field(default_factory=set)
    # Observation ids that carry a `truncated_by_limit` policy action.
    truncated: set[str] = field(default_factory=set)
    cache_hit: bool = False

    @classmethod
    def build(cls, document: dict) -> DocumentIndex:
        index = cls()
        for obs in as_list(document.get("observations")):
            obs_id = as_dict(obs).get("observation_id")
            # The first occurrence wins; later ones are duplicate_observation_id offenders.
            if isinstance(obs_id, str) and obs_id not in index.observations:
                index.observations[obs_id] = obs
        for attempt in as_list(document.get("provider_attempts")):
            attempt_id = as_dict(attempt).get("attempt_id")
            if isinstance(attempt_id, str):
                index.attempt_ids.add(attempt_id)
        for action in as_list(document.get("policy_actions")):
            action = as_dict(action)
            if action.get("action") == "truncated_by_limit" and isinstance(
                action.get("observation_id"), str
            ):
                index.truncated.add(action["observation_id"])
        disposition = as_dict(document.get("cache_status")).get("disposition")
        index.cache_hit = isinstance(disposition, str) and disposition in CACHE_HITS
        return index
