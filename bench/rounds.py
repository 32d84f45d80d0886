"""Rounds taking turns: what makes a ratio of `make bench` worth acting on.

One measurement of a path and one of its limit, minutes apart on a shared machine,
move independently (`floor_over_register` read 2.08, 2.66 and 2.81 within an hour).
So a step measures in rounds, each round the path and then its limit (A, B, A, B, …:
`taking_turns`), keeps every round's figures in its results (`"rounds"`: one dict a
round, shaped like the step's own figures, holding only what that round measured),
and each ratio is the median of its rounds' ratios, shown with their spread
(`spread`). Nothing here touches the database.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

# Rounds per ratio unless a step's own knob says otherwise (BENCH_ROUNDS).
DEFAULT = 3


def taking_turns(rounds: int, measures: Sequence[tuple[str, Callable[[int], Any]]]) -> list[dict]:
    """`rounds` rounds, each running every measure once in the order given (round i
    calls each with i): [{name: what it returned}] in round order."""
    return [{name: measure(i) for name, measure in measures} for i in range(rounds)]


def merge(*parts: Sequence[dict]) -> list[dict]:
    """The rounds of several parts of one step as one list: round i holds every part's
    round i (a part with fewer rounds adds nothing to the later ones)."""
    out: list[dict] = []
    for part in parts:
        for i, figures in enumerate(part):
            if i == len(out):
                out.append({})
            _deep_update(out[i], figures)
    return out


def _deep_update(into: dict, figures: dict) -> None:
    for key, value in figures.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _deep_update(into[key], value)
        else:
            into[key] = value


def spread(values: Sequence[float], digits: int = 2) -> dict[str, Any]:
    """The median of the rounds' values, their min and max and how many there were
    (None figures for none)."""
    if not values:
        return {"median": None, "min": None, "max": None, "n": 0}
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
        "n": len(values),
    }


def median(values: Sequence[float]) -> float | None:
    """The median of the figures (None for none): the value a step reports beside its
    rounds."""
    return statistics.median(values) if values else None
