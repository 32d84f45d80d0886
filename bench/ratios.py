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


def _fmt(value: Any, unit: str = "") -> str:
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


def _met(value: bool | None) -> str:
    return {True: "yes", False: "NO", None: "—"}[value]


def ratio_rows(results: dict, ratios: dict[str, dict]) -> list[tuple[str, ...]]:
    """Table rows (path, registry, limit in the same run, ratio, target, met?)."""
    rows = []
    for r in RATIOS:
        got = ratios[r.key]
        rows.append((
            f"{r.path} [{r.key}]",
            _fmt(got["registry"], r.registry.unit),
            f"{r.limit.label}: {_fmt(got['limit'], r.limit.unit)}",
            _shown(got),
            got["target"],
            _met(got["met"]),
        ))  # fmt: skip
    for key, (path, *_) in SCALING.items():
        got = ratios[key]
        sizes = " / ".join(_fmt(v, "ms") for v in got["p50_ms"].values()) or "—"
        at = " / ".join(f"{int(s):,}" for s in got["p50_ms"])
        rows.append((f"{path} [{key}]", sizes, f"at {at}" if at else "—",
                     _fmt(got["ratio"]) + ("×" if got["ratio"] is not None else ""),
                     got["target"], _met(got["met"])))  # fmt: skip
    return rows


def absolute_rows(results: dict) -> list[tuple[str, ...]]:
    """Rows of figures held to an absolute target (or shown for context), same columns."""
    rows: list[tuple[str, ...]] = []

    def row(path: str, figure: Figure, target: Target | None = None, limit: str = "—") -> None:
        # Held to `target`, in the figure's unit; without one, shown for context.
        value = figure.get(results)
        shown = f"{target} {figure.unit}".strip() if target else ""
        rows.append((path, _fmt(value, figure.unit), limit, "—", shown,
                     _met(target.met(value)) if target else ""))  # fmt: skip

    per_s = Target("≥", 5000)
    b = results.get("bulk_register") or {}
    c = b.get("concurrent") or {}
    row(f"bulk registration, {c.get('writers', '?')} writers",
        Figure("bulk_register", ("concurrent", "per_s"), "links/s"), per_s)  # fmt: skip
    row("bulk registration, 1 writer", Figure("bulk_register", ("links_per_s",), "links/s"),
        per_s)  # fmt: skip
    w = results.get("wsp_import") or {}
    row(f"WSP import, batches of {w.get('batch_size', '?')}",
        Figure("wsp_import", ("observations_per_s",), "obs/s"), per_s)  # fmt: skip
    wc = w.get("concurrent") or {}
    row(f"WSP import, {wc.get('writers', '?')} writers",
        Figure("wsp_import", ("concurrent", "per_s"), "obs/s"), per_s)  # fmt: skip
    row("bulk registration rows by executemany (context)",
        Figure("bulk_register", ("executemany", "links_per_s"), "links/s"))  # fmt: skip
    # The limits again with the tables' foreign keys (checked at commit), which the
    # registry cannot skip and the COPY baselines' scratch tables do not carry.
    keyed = (
        ("bulk registration beside a COPY with the foreign keys (context)",
         Figure("bulk_register", ("links_per_s",), "links/s"),
         Figure("bulk_register", ("copy_with_foreign_keys", "links_per_s"), "links/s")),
        ("WSP import beside a COPY with the foreign keys (context)",
         Figure("wsp_import", ("observations_per_s",), "obs/s"),
         Figure("wsp_import", ("copy", "with_foreign_keys_observations_per_s"), "obs/s")),
    )  # fmt: skip
    for path, registry, limit in keyed:
        got, by = registry.get(results), limit.get(results)
        if got and by:
            rows.append((path, _fmt(got, registry.unit), f"COPY: {_fmt(by, limit.unit)}",
                         f"{by / got:.2f}×", "", ""))  # fmt: skip
    row("WSP import, one document per transaction",
        Figure("wsp_import", ("per_document_observations_per_s",), "obs/s"))  # fmt: skip
    row("change fan-out (source change)", Figure("fanout", ("source", "links_per_s"), "links/s"))
    row("HTTP register", Figure("http_register", ("register", "req_per_s"), "req/s"),
        Target("≥", 300))  # fmt: skip
    row("HTTP register p99", Figure("http_register", ("register", "p99_ms"), "ms"),
        Target("<", 100))  # fmt: skip
    row("32 writers on one revision: successes",
        Figure("concurrency", ("successes",), ""), Target("=", 1))  # fmt: skip
    row("32 writers on one revision: lost updates",
        Figure("concurrency", ("lost_updates",), ""), Target("=", 0))  # fmt: skip
    s = results.get("reads_at_scale") or {}
    row(f"list page of 50 (of {s.get('links', 0):,} links): queries",
        Figure("reads_at_scale", ("list_queries",), ""), Target("≤", 6))  # fmt: skip
    row("list page of 50 p50", Figure("reads_at_scale", ("list_p50_ms",), "ms"),
        Target("<", 30))  # fmt: skip
    row(
        "verify_log beside the leaves read and hashed alone (the old baseline; context)",
        Figure("transparency", ("verify", "hashing_leaves_per_s"), "leaves/s"),
    )
    row(
        "bulk registration with the log, until the sequencer integrated it (context)",
        Figure("transparency", ("bulk", "on_integrated_links_per_s"), "links/s"),
    )
    p = results.get("log_pace") or {}
    row(f"log pace: links written by 2 bulk writers ({p.get('transport', '?')})",
        Figure("log_pace", ("written_per_s",), "links/s"),
        limit=f"{p.get('links', 0):,} links")  # fmt: skip
    row("log pace: checkpoint lag p99 at that rate",
        Figure("log_pace", ("checkpoint_lag", "p99_ms"), "ms"), Target("<", 1000))  # fmt: skip
    row("log pace: the sequencer alone on a backlog (context)",
        Figure("log_pace", ("sequencer_alone", "leaves_per_s"), "leaves/s"))  # fmt: skip
    row(
        "checkpoint lag p99 under steady HTTP register load",
        Figure("transparency", ("checkpoint_lag", "p99_ms"), "ms"),
        Target("<", 1000),
    )
    m = results.get("memory") or {}
    rss = Target("<", 300)
    row(f"peak RSS, {m.get('bulk_register', {}).get('links', '?')}-link bulk registration",
        Figure("memory", ("bulk_register", "peak_rss_mb"), "MB"), rss)  # fmt: skip
    row(f"peak RSS, {m.get('wsp_import', {}).get('documents', '?')}-document batch import",
        Figure("memory", ("wsp_import", "peak_rss_mb"), "MB"), rss)  # fmt: skip
    t = results.get("throttle") or {}
    row("throttle before a view: queries per request",
        Figure("throttle", ("counter", "queries_per_request"), ""), Target("≤", 1))  # fmt: skip
    row("throttle before a view: µs per request",
        Figure("throttle", ("counter", "us_per_request"), "µs"))  # fmt: skip
    row(f"throttle, {t.get('contended', {}).get('threads', '?')} threads on one caller: "
        "µs per request", Figure("throttle", ("contended", "us_per_request"), "µs"))  # fmt: skip
    row("throttle in Redis: µs per request", Figure("throttle", ("redis", "us_per_request"), "µs"))
    row("DRF's throttle over the database cache (replaced): queries per request",
        Figure("throttle", ("drf_cache_before", "queries_per_request"), ""))  # fmt: skip
    row("DRF's throttle over the database cache (replaced): µs per request",
        Figure("throttle", ("drf_cache_before", "us_per_request"), "µs"))  # fmt: skip
    f = results.get("event_feed") or {}
    d = f.get("delivery") or {}
    rate = f"{d.get('writes_per_s', '?')} writes/s"
    row(f"webhook delivery lag p50 at {rate} (local receiver)",
        Figure("event_feed", ("delivery", "lag_p50_ms"), "ms"))  # fmt: skip
    row(f"webhook delivery lag p99 at {rate} (local receiver)",
        Figure("event_feed", ("delivery", "lag_p99_ms"), "ms"))  # fmt: skip
    row(
        "webhook deliveries received of events written",
        Figure("event_feed", ("delivery", "delivered"), ""),
        limit=f"of {d.get('written', '?')}",
    )
    st = f.get("stream") or {}
    row(f"stream: {st.get('subscribers', '?')} idle subscribers, server RSS (uvicorn)",
        Figure("event_feed", ("stream", "rss_with_subscribers_mb"), "MB"),
        limit=f"before: {st.get('rss_before_mb', '?')} MB")  # fmt: skip
    row("stream: memory per idle subscriber",
        Figure("event_feed", ("stream", "kib_per_subscriber"), "KiB"))  # fmt: skip
    row("stream: one event reaches every subscriber, p50",
        Figure("event_feed", ("stream", "fanout_p50_ms"), "ms"))  # fmt: skip
    # PDF import (bench/workloads/pdf.py): a server importing a PDF of ~50 MB.
    server = (results.get("pdf_import") or {}).get("server") or {}
    row(f"peak RSS, gunicorn worker importing a {server.get('bytes', 0) / 1e6:.0f} MB PDF",
        Figure("pdf_import", ("server", "peak_rss_mb"), "MB"), rss,
        limit=f"before: {server.get('rss_before_mb', '?')} MB")  # fmt: skip
    return [r for r in rows if r[1] != "—"]
