"""Peak resident memory of a writer process (bench.writer: its own interpreter, as an
app server worker) during one 1,000-link bulk registration and one batch import of
100 WSP documents, read from the process's own /proc status (VmHWM)."""

from __future__ import annotations

from bench.workloads.common import BATCH, env_int, writers

TARGET_MB = 300


def peak_rss() -> dict:
    documents = env_int("BENCH_RSS_WSP_DOCS", 100)
    [register] = writers("register", count=1, batches=1, batch_size=BATCH, offset=70_000_000,
                         start_in=0)  # fmt: skip
    [wsp] = writers("wsp", count=1, batches=1, batch_size=documents, offset=80_000_000,
                    start_in=0)  # fmt: skip
    return {
        "bulk_register": {
            "links": BATCH,
            "rss_before_mb": register["rss_before_mb"],
            "peak_rss_mb": register["peak_rss_mb"],
        },
        "wsp_import": {
            "documents": documents,
            "rss_before_mb": wsp["rss_before_mb"],
            "peak_rss_mb": wsp["peak_rss_mb"],
        },
        "target_mb": TARGET_MB,
    }
