"""The registry beside its limit in the same run: the `ratios` of bench/results.json.

Each ratio divides two figures of results.json. A step that measures in rounds
taking turns (bench/rounds.py) keeps them in its `"rounds"` list, each round shaped
like the step's figures: the ratio is then the median of the rounds' ratios, with
their min and max (`spread`), and its two figures the medians of the rounds'. A
figure with no rounds is one round. Every step's figures carry the
`run_id` of the run that measured them (a BENCH_ONLY run keeps the other steps'
figures from an earlier one), and a ratio is computed only when both of its
figures come from the current run.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench import rounds as turns

_OPS: dict[str, Callable[[float, float], bool]] = {
    "≤": operator.le,
    "<": operator.lt,
    "≥": operator.ge,
    ">": operator.gt,
    "=": operator.eq,
}


@dataclass(frozen=True)
class Target:
    op: str
    value: float

    def met(self, figure: float | None) -> bool | None:
        return None if figure is None else _OPS[self.op](figure, self.value)

    def __str__(self) -> str:
        if isinstance(self.value, float):
            value = f"{self.value:.1f}" if round(self.value, 1) == self.value else f"{self.value:g}"
        else:
            value = f"{self.value:,}"
        return f"{self.op} {value}"


@dataclass(frozen=True)
class Figure:
    """A figure of results.json: the step that measured it and its keys within."""

    step: str
    keys: tuple[str, ...]
    unit: str
    label: str = ""

    def get(self, results: dict) -> float | None:
        value: Any = results.get(self.step)
        for key in self.keys:
            value = value.get(key) if isinstance(value, dict) else None
        return value if isinstance(value, int | float) else None


@dataclass(frozen=True)
class Ratio:
    key: str
    path: str
    registry: Figure
    limit: Figure
    # True: limit ÷ registry (how many times the limit is faster); False: registry ÷ limit.
    limit_over_registry: bool
    target: Target


RATIOS = (
    Ratio("copy_over_bulk", "bulk registration (register_many, 1 writer)",
          Figure("bulk_register", ("links_per_s",), "links/s"),
          Figure("bulk_register", ("copy", "links_per_s"), "links/s", "COPY of its rows"),
          True, Target("≤", 2.0)),
    Ratio("copy_over_wsp", "WSP import (import_wsp_documents, batches)",
          Figure("wsp_import", ("observations_per_s",), "obs/s"),
          Figure("wsp_import", ("copy", "observations_per_s"), "obs/s", "COPY of its rows"),
          True, Target("≤", 2.0)),
    Ratio("floor_over_register", "HTTP register (gunicorn)",
          Figure("http_register", ("register", "req_per_s"), "req/s"),
          Figure("http_register", ("bare_insert_floor", "req_per_s"), "req/s",
                 "bare one-insert DRF endpoint"),
          True, Target("≤", 2.0)),
    Ratio("register_over_naive_peer", "HTTP register vs the naive peer",
          Figure("http_register", ("register", "req_per_s"), "req/s"),
          Figure("http_register", ("naive_peer", "req_per_s"), "req/s",
                 "DRF ModelSerializer + save()"),
          False, Target("≥", 1.0)),
    Ratio("list_over_raw", "list page of 50, p50 at the largest size",
          Figure("reads_at_scale", ("list_p50_ms",), "ms"),
          Figure("reads_at_scale", ("raw_p50_ms",), "ms",
                 "one psycopg query, no HTTP (the floor)"),
          False, Target("≤", 3.0)),
    Ratio("fanout_over_bulk", "change fan-out (answer change)",
          Figure("fanout", ("links_per_s",), "links/s"),
          Figure("fanout", ("register_links_per_s",), "links/s",
                 "bulk registration of the same links"),
          False, Target("≥", 1.0)),
    # The transparency log (docs/transparency.md): the writes with it beside without.
    Ratio("log_bulk", "bulk registration with the transparency log",
          Figure("transparency", ("bulk", "on_links_per_s"), "links/s"),
          Figure("transparency", ("bulk", "off_links_per_s"), "links/s", "the log off"),
          True, Target("≤", 1.15)),
    Ratio("log_register", "HTTP register with the transparency log (gunicorn)",
          Figure("transparency", ("http", "on", "req_per_s"), "req/s"),
          Figure("transparency", ("http", "off", "req_per_s"), "req/s", "the log off"),
          True, Target("≤", 1.15)),
    # The verifier beside the least a verifier must do (#37): read the leaves and every
    # committed row and key they name, hash the leaves and HMAC the rows, in one loop.
    Ratio("log_verify", "verify_log (commitments, tree, signatures)",
          Figure("transparency", ("verify", "verify_leaves_per_s"), "leaves/s"),
          Figure("transparency", ("verify", "must_do_leaves_per_s"), "leaves/s",
                 "leaves and committed rows read, hashed and HMACed in a loop"),
          True, Target("≤", 2.0)),
    Ratio("log_verify_tree", "verify_log --skip-commitments (tree, leaves, signatures)",
          Figure("transparency", ("verify", "verify_tree_only_leaves_per_s"), "leaves/s"),
          Figure("transparency", ("verify", "tree_hashing_leaves_per_s"), "leaves/s",
                 "the leaves and the tree's nodes hashed in a loop"),
          True, Target("≤", 2.0)),
    # Production's topology (bench/workloads/log_pace.py): the sequencer service keeps
    # pace with two bulk writers; each round a third of the writing window.
    Ratio("log_keeps_up", "leaves integrated over links written (2 bulk writers, HTTP)",
          Figure("log_pace", ("integrated_per_s",), "links/s"),
          Figure("log_pace", ("written_per_s",), "links/s", "links written"),
          False, Target("≥", 0.9)),
    Ratio("outbox_over_register", "register with the event outbox vs without",
          Figure("event_feed", ("outbox", "with_outbox", "per_s"), "reg/s"),
          Figure("event_feed", ("outbox", "without_outbox", "per_s"), "reg/s",
                 "the same registrations, no outbox"),
          True, Target("≤", 1.1)),
)  # fmt: skip
# PDF import (bench/workloads/pdf.py), a step of its own module.
RATIOS += (
    Ratio("pdf_over_library", "PDF import (a text PDF, BENCH_PDF_PAGES pages)",
          Figure("pdf_import", ("import_pages_per_s",), "pages/s"),
          Figure("pdf_import", ("library_pages_per_s",), "pages/s",
                 "the extraction library alone, same file, one process"),
          True, Target("≤", 1.5)),
)  # fmt: skip

# The list's documented orderings (docs/api.md "Lists"), each measured at every
# corpus size (`reads_at_scale` … `orderings`: the slower p50 of its first page and
# of the page from the middle of the list); held equal to the allow-list by
# tests/ops/test_bench_ratios.py.
ORDERINGS = ("-grounding_id", "grounding_id", "-observed_at", "observed_at", "-revision",
             "revision")  # fmt: skip

# Flat in size: the largest p50 over the smallest. (path, keys down to the sizes,
# keys from a size down to the figure, and the step when not reads_at_scale.)
SCALING = {
    "list_scaling": ("list page p50 across corpus sizes", ("scales",), ("list_p50_ms",)),
    **{
        f"ordering_scaling[{o}]": (
            f"list page p50 across sizes, ordering={o}",
            ("scales",),
            ("orderings", o, "p50_ms"),
        )
        for o in ORDERINGS
    },
    "revisions_scaling": ("revisions/{1, 100, 1000} p50", ("revisions",), ("p50_ms",)),
    "inclusion_proof_scaling": (
        "inclusion proof p50 at 10k / 100k / 1M leaves",
        ("proofs",),
        ("p50_ms",),
        "transparency",
    ),
}
SCALING_TARGET = Target("≤", 1.5)


def _same_run(results: dict, *steps: str) -> bool:
    run = results.get("run_id")
    return all(isinstance(results.get(s), dict) and results[s].get("run_id") == run for s in steps)


def scaling_figures(results: dict, key: str) -> dict[str, float]:
    """{size: p50 ms} of one scaling ratio, smallest size first."""
    _, keys, leaf, *_ = SCALING[key]
    step = results.get(_scaling_step(key)) or {}
    for k in keys:
        step = step.get(k) or {}
    figures = {}
    for size, at in step.items():
        for k in leaf:
            at = at.get(k) if isinstance(at, dict) else None
        if isinstance(at, int | float):
            figures[size] = at
    return dict(sorted(figures.items(), key=lambda item: int(item[0])))


def _scaling_step(key: str) -> str:
    _, _, _, *rest = SCALING[key]
    return rest[0] if rest else "reads_at_scale"


def _divide(r: Ratio, registry: float, limit: float) -> float:
    return limit / registry if r.limit_over_registry else registry / limit


def _rounds(results: dict, r: Ratio) -> list[tuple[float, float]]:
    """(registry, limit) of each round of the ratio's step that measured both."""
    step = results.get(r.registry.step)
    listed = step.get("rounds") if isinstance(step, dict) else None
    if r.registry.step != r.limit.step or not isinstance(listed, list):
        return []
    pairs = []
    for figures in listed:
        shaped = {r.registry.step: figures}
        registry, limit = r.registry.get(shaped), r.limit.get(shaped)
        if registry and limit:
            pairs.append((registry, limit))
    return pairs


def compute(results: dict) -> dict[str, dict]:
    """The `ratios` object: each ratio (the median of its rounds) with its spread, the
    two figures it divides (the rounds' medians), its target and whether it is met;
    None figures where a step did not run in this run."""
    out: dict[str, dict] = {}
    for r in RATIOS:
        same = _same_run(results, r.registry.step, r.limit.step)
        pairs = _rounds(results, r) if same else []
        registry = r.registry.get(results) if same else None
        limit = r.limit.get(results) if same else None
        if pairs:
            registry = turns.median([p[0] for p in pairs])
            limit = turns.median([p[1] for p in pairs])
        elif registry and limit:
            pairs = [(registry, limit)]
        got = turns.spread([_divide(r, *p) for p in pairs])
        value = got["median"]
        out[r.key] = {"ratio": value, "min": got["min"], "max": got["max"], "rounds": got["n"],
                      "registry": registry, "limit": limit, "unit": r.registry.unit,
                      "target": str(r.target), "met": r.target.met(value)}  # fmt: skip
    for key in SCALING:
        same = _same_run(results, _scaling_step(key))
        figures = scaling_figures(results, key) if same else {}
        value = None
        if len(figures) >= 2 and min(figures.values()) > 0:
            value = round(max(figures.values()) / min(figures.values()), 2)
        out[key] = {"ratio": value, "p50_ms": figures, "target": str(SCALING_TARGET),
                    "met": SCALING_TARGET.met(value)}  # fmt: skip
    return out


def fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return "—"
    if isinstance(value, float) and not value.is_integer():
        text = f"{value:,.2f}" if value < 100 else f"{value:,.0f}"
    else:
        text = f"{int(value):,}"
    return f"{text} {unit}".strip()


def _shown(got: dict) -> str:
    """`median× (min–max, n rounds)`: the ratio as `make bench` prints it."""
    if got["ratio"] is None:
        return "—"
    rounds = got.get("rounds") or 1
    if rounds == 1:
        return f"{got['ratio']:.2f}× (1 round)"
    return f"{got['ratio']:.2f}× ({got['min']:.2f}–{got['max']:.2f}, {rounds} rounds)"


def met_mark(value: bool | None) -> str:
    return {True: "yes", False: "NO", None: "—"}[value]


def ratio_rows(results: dict, ratios: dict[str, dict]) -> list[tuple[str, ...]]:
    """Table rows (path, registry, limit in the same run, ratio, target, met?)."""
    rows = []
    for r in RATIOS:
        got = ratios[r.key]
        rows.append((
            f"{r.path} [{r.key}]",
            fmt(got["registry"], r.registry.unit),
            f"{r.limit.label}: {fmt(got['limit'], r.limit.unit)}",
            _shown(got),
            got["target"],
            met_mark(got["met"]),
        ))  # fmt: skip
    for key, (path, *_) in SCALING.items():
        got = ratios[key]
        sizes = " / ".join(fmt(v, "ms") for v in got["p50_ms"].values()) or "—"
        at = " / ".join(f"{int(s):,}" for s in got["p50_ms"])
        rows.append((f"{path} [{key}]", sizes, f"at {at}" if at else "—",
                     fmt(got["ratio"]) + ("×" if got["ratio"] is not None else ""),
                     got["target"], met_mark(got["met"])))  # fmt: skip
    return rows
