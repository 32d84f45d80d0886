"""Cross-field rules of the structured values that a JSON Schema cannot state
(ranges that must not be inverted, counts that must agree)."""

from __future__ import annotations

from collections.abc import Callable

from common.kernel.refusals import Offender, pointer_join
from grounding.values.timestamps import PARTIAL_DATE, parse_rfc3339


def _is_count(x: object) -> bool:
    """A non-negative int: cross-field rules only compare schema-valid offsets and counts."""
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _inverted(obj: object, pointer: str, code: str) -> list[Offender]:
    if isinstance(obj, dict):
        start, end = obj.get("start"), obj.get("end")
        if _is_count(start) and _is_count(end) and start > end:
            return [Offender(pointer_join(pointer, "end"), code, "end must not be less than start")]
    return []


_POSITION_SELECTORS = frozenset({"TextPositionSelector", "DataPositionSelector"})


def _selector_rules(value: object, pointer: str) -> list[Offender]:
    out: list[Offender] = []
    stack: list[tuple[object, str]] = [(value, pointer)]
    while stack:  # iterative: refinedBy chains may be long
        selector, where = stack.pop()
        if not isinstance(selector, dict):
            continue
        kind = selector.get("type")
        if isinstance(kind, str) and kind in _POSITION_SELECTORS:
            out.extend(_inverted(selector, where, "selector.range_inverted"))
        children = ["refinedBy"]
        if kind == "RangeSelector":
            children = ["startSelector", "endSelector", "refinedBy"]
        for member in reversed(children):
            if member in selector:
                stack.append((selector[member], pointer_join(where, member)))
    return out


def _anchor_result_rules(value: object, pointer: str) -> list[Offender]:
    if not isinstance(value, dict):
        return []
    out: list[Offender] = []
    matches, count = value.get("matches"), value.get("match_count")
    if isinstance(matches, list):
        for i, match in enumerate(matches):
            out.extend(
                _inverted(
                    match, pointer_join(pointer, "matches", i), "anchor_result.range_inverted"
                )
            )
        if _is_count(count) and count != len(matches):
            out.append(
                Offender(
                    pointer_join(pointer, "match_count"),
                    "anchor_result.match_count_mismatch",
                    "match_count must equal the number of matches reported",
                )
            )
    return out


def _representation_check_rules(value: object, pointer: str) -> list[Offender]:
    if isinstance(value, dict) and isinstance(value.get("digest"), dict):
        covered = value["digest"].get("covered")
        where = pointer_join(pointer, "digest", "covered")
        return _inverted(covered, where, "representation_check.range_inverted")
    return []


def _coverage_population_rules(value: object, pointer: str) -> list[Offender]:
    if isinstance(value, dict):
        num, den = value.get("numerator"), value.get("denominator")
        if _is_count(num) and _is_count(den) and num > den:
            return [
                Offender(
                    pointer_join(pointer, "numerator"),
                    "coverage_population.numerator_exceeds_denominator",
                    "numerator must not exceed denominator",
                )
            ]
    return []


def _applicability_interval_rules(value: object, pointer: str) -> list[Offender]:
    if not isinstance(value, dict):
        return []
    start, end = value.get("start"), value.get("end")
    if not (isinstance(start, str) and isinstance(end, str)):
        return []
    inverted = False
    start_dt, end_dt = parse_rfc3339(start), parse_rfc3339(end)
    if start_dt is not None and end_dt is not None:
        inverted = start_dt > end_dt
    elif PARTIAL_DATE.match(start) and PARTIAL_DATE.match(end):
        common = min(len(start), len(end))  # compare at the coarser precision
        inverted = start[:common] > end[:common]
    if inverted:
        return [
            Offender(
                pointer_join(pointer, "end"),
                "applicability_interval.range_inverted",
                "end must not be before start",
            )
        ]
    return []


SEMANTIC_CHECKS: dict[str, Callable[[object, str], list[Offender]]] = {
    "selector": _selector_rules,
    "anchor_result": _anchor_result_rules,
    "representation_check": _representation_check_rules,
    "coverage_population": _coverage_population_rules,
    "applicability_interval": _applicability_interval_rules,
}
