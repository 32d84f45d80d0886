"""The figures `make bench` holds to an absolute target (or shows for context), as
rows of the same table as the ratios (bench/report.py): throughputs, latencies,
memory, the log's pace and the throttle, each from results.json."""

from __future__ import annotations

from bench.ratios import Figure, Target, fmt, met_mark


def absolute_rows(results: dict) -> list[tuple[str, ...]]:
    """Rows of figures held to an absolute target (or shown for context), same columns."""
    rows: list[tuple[str, ...]] = []

    def row(path: str, figure: Figure, target: Target | None = None, limit: str = "—") -> None:
        # Held to `target`, in the figure's unit; without one, shown for context.
        value = figure.get(results)
        shown = f"{target} {figure.unit}".strip() if target else ""
        rows.append((path, fmt(value, figure.unit), limit, "—", shown,
                     met_mark(target.met(value)) if target else ""))  # fmt: skip

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
            rows.append((path, fmt(got, registry.unit), f"COPY: {fmt(by, limit.unit)}",
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
