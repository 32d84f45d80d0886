"""Cross-field rules on results[] (§3, §3.1, §4): references, clusters, projected text."""

from __future__ import annotations

from collections.abc import Iterator

from common.kernel.refusals import Offender, pointer_join
from evidence.wsp.context import DocumentIndex, as_list
from evidence.wsp.text_rules import TRUNCATION, derives_from, segment_offenders

CONTENT_FIELDS = ("title", "snippet", "text")


def result_offenders(document: dict, index: DocumentIndex) -> Iterator[Offender]:
    for i, result in enumerate(as_list(document.get("results"))):
        if not isinstance(result, dict):
            continue
        base = pointer_join("/results", i)
        yield from _membership(result, base, index)
        for field in CONTENT_FIELDS:
            projected = result.get(field)
            if isinstance(projected, dict):
                yield from _projected(projected, field, pointer_join(base, field), index)


def _membership(result: dict, base: str, index: DocumentIndex) -> Iterator[Offender]:
    representative = result.get("representative_observation_id")
    if isinstance(representative, str) and representative not in index.observations:
        yield Offender(
            pointer_join(base, "representative_observation_id"),
            "result_ref_unresolved",
            "names no observation of this response",
        )
    members = result.get("observation_ids")
    if not isinstance(members, list):
        return
    seen: set[str] = set()
    for j, member in enumerate(members):
        if not isinstance(member, str):
            continue
        if member not in index.observations:
            yield Offender(
                pointer_join(base, "observation_ids", j),
                "result_ref_unresolved",
                "names no observation of this response",
            )
        if member in seen:
            yield Offender(
                pointer_join(base, "observation_ids", j),
                "observation_ids_duplicate",
                "a cluster lists each member once",
            )
        seen.add(member)
    if isinstance(representative, str) and representative not in seen:
        yield Offender(
            pointer_join(base, "representative_observation_id"),
            "representative_not_member",
            "observation_ids contains the representative",
        )
    # "Clustered" = the projection groups more than one distinct observation (§3:
    # dedup_cluster_id is REQUIRED for clustered search_result projections).
    if result.get("kind") == "search_result" and len(seen) > 1 and "dedup_cluster_id" not in result:
        yield Offender(
            pointer_join(base, "dedup_cluster_id"),
            "dedup_cluster_id_missing",
            "a clustered search_result carries dedup_cluster_id",
        )


def _projected(projected: dict, field: str, base: str, index: DocumentIndex) -> Iterator[Offender]:
    yield from segment_offenders(projected, base)
    provenance = projected.get("provenance")
    if not isinstance(provenance, dict):
        return
    if "aggregation" not in provenance:
        yield from _single_source(
            provenance,
            projected.get("text"),
            pointer_join(base, "provenance"),
            pointer_join(base, "text"),
            index,
        )
        return
    # §3.1: only a snippet, only with origin "engine", may aggregate observations.
    if field != "snippet":
        yield Offender(
            pointer_join(base, "provenance"),
            "aggregate_not_snippet",
            "only a snippet may carry the concat aggregate provenance",
        )
    if projected.get("origin") != "engine":
        yield Offender(
            pointer_join(base, "origin"), "aggregate_origin", 'an aggregate has origin "engine"'
        )
    fragments = as_list(provenance.get("fragments"))
    seen: set[tuple[str, str]] = set()
    texts: list[str] = []
    for k, fragment in enumerate(fragments):
        if not isinstance(fragment, dict):
            continue
        pointer = pointer_join(base, "provenance", "fragments", k)
        yield from _single_source(
            fragment, fragment.get("text"), pointer, pointer_join(pointer, "text"), index
        )
        key = (fragment.get("observation_id"), fragment.get("source_field"))
        if all(isinstance(part, str) for part in key):
            if key in seen:
                yield Offender(
                    pointer,
                    "aggregate_fragment_duplicate",
                    "fragments are unique by (observation_id, source_field)",
                )
            seen.add(key)
        if isinstance(fragment.get("text"), str):
            texts.append(fragment["text"])
    separator, text = provenance.get("separator"), projected.get("text")
    if (
        isinstance(separator, str)
        and isinstance(text, str)
        and fragments
        and len(texts) == len(fragments)
        and separator.join(texts) != text
    ):
        yield Offender(
            pointer_join(base, "text"),
            "aggregate_mismatch",
            "the text equals separator.join(fragment texts) exactly",
        )


def _single_source(
    provenance: dict,
    text: object,
    base: str,
    text_pointer: str,
    index: DocumentIndex,
) -> Iterator[Offender]:
    """§4: the text derives from one source field of the named observation."""
    obs_id = provenance.get("observation_id")
    if not isinstance(obs_id, str):
        return
    observation = index.observations.get(obs_id)
    if observation is None:
        yield Offender(
            pointer_join(base, "observation_id"),
            "result_ref_unresolved",
            "names no observation of this response",
        )
        return
    transformations = provenance.get("transformations")
    if not isinstance(transformations, list) or not all(
        isinstance(t, str) for t in transformations
    ):
        return
    if TRUNCATION in transformations and obs_id not in index.truncated:
        yield Offender(
            pointer_join(base, "transformations"),
            "truncation_without_policy_action",
            "deterministic_truncation needs a truncated_by_limit action for the observation",
        )
    source_field = provenance.get("source_field")
    if not isinstance(source_field, str) or source_field not in {"title", "snippet", "text"}:
        return
    if not isinstance(text, str):
        return
    source = observation.get(source_field)
    if not isinstance(source, str):
        yield Offender(
            pointer_join(base, "source_field"),
            "projection_source_mismatch",
            f"the observation has no {source_field} to project",
        )
    elif not derives_from(text, source, transformations):
        yield Offender(
            text_pointer,
            "projection_source_mismatch",
            f"the text does not derive from the observation's {source_field} "
            "by the listed transformations",
        )
