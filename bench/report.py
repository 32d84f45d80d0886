"""The benchmark's table: every figure beside its target."""

from __future__ import annotations


def print_table(results: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="grounding registry benchmark (PostgreSQL)")
    table.add_column("measure")
    table.add_column("figure", justify="right")
    table.add_column("target", justify="right")

    def row(name, value, target=""):
        table.add_row(name, str(value), str(target))

    b = results.get("baseline")
    if b:
        row("COPY links/s (7 rows each)", b["copy_links_per_s"])
        row("executemany links/s", b["executemany_links_per_s"])
    r = results.get("bulk_register")
    if r:
        row("bulk register links/s", r["links_per_s"], "≥ 5000")
        if "concurrent" in r:
            c = r["concurrent"]
            row(f"bulk register links/s, {c['writers']} writers", c["per_s"], "≥ 5000")
        if b:
            row("COPY / bulk register", round(b["copy_links_per_s"] / r["links_per_s"], 2), "≤ 10")
    f = results.get("fanout")
    if f:
        for kind in ("answer", "source"):
            if kind in f:
                row(f"change fan-out links/s ({kind}, {f['links']:,} links)",
                    f[kind]["links_per_s"])  # fmt: skip
    w = results.get("wsp_import")
    if w:
        if "per_document_observations_per_s" in w:
            row(
                "WSP import observations/s, one per transaction",
                w["per_document_observations_per_s"],
            )
        row(
            f"WSP import observations/s, batches of {w.get('batch_size', 1)}",
            w["observations_per_s"],
            "≥ 5000",
        )
        if "concurrent" in w:
            c = w["concurrent"]
            row(f"WSP import observations/s, {c['writers']} writers", c["per_s"], "≥ 5000")
    h = results.get("http_register")
    if h:
        row("HTTP register req/s", h["register"]["req_per_s"], "≥ 300")
        row("HTTP register p50 ms", h["register"]["p50_ms"])
        row("HTTP register p99 ms", h["register"]["p99_ms"], "< 100")
        row("bare insert req/s (floor)", h["bare_insert_floor"]["req_per_s"])
        row("floor / register", h["register_vs_floor_ratio"])
    c = results.get("concurrency")
    if c:
        row("32 writers: successes", c["successes"], "1")
        row("32 writers: lost updates", c["lost_updates"], "0")
        row("32 writers: wall ms", c["wall_ms"])
    s = results.get("reads_at_scale")
    if s:
        row(f"list (of {s['links']:,}) queries", s["list_queries"], "≤ 6")
        row("list p50 ms", s["list_p50_ms"], "< 30")
        for depth, figures in s["revisions"].items():
            row(f"revisions/{depth} p50 ms", figures["p50_ms"], "flat")
    Console().print(table)
