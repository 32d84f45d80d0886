"""`make bench-smoke`: every step of `make bench` at a tiny size, in its own database
and results file, failing unless every ratio was computed.

The bench is run by hand, so a change that breaks one of its steps went unnoticed
twice (a sequencer started without a signing key, a cursor built without its
ordering); CI runs this instead. Its figures measure nothing: sizes this small are
all fixed costs. The knobs are defaults: the environment wins."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

TINY = {
    "BENCH_DATABASE": "grounding_bench_smoke",
    "BENCH_BULK_BATCHES": "1",
    "BENCH_FANOUT_LINKS": "1000",
    "BENCH_WSP_DOCS": "5",
    "BENCH_WSP_BATCHED_DOCS": "20",
    "BENCH_WSP_BATCH_SIZE": "10",
    "BENCH_HTTP_REQUESTS": "60",
    "BENCH_HTTP_ROUNDS": "1",
    "BENCH_GUNICORN_WORKERS": "2",
    "BENCH_THROTTLE_REQUESTS": "50",
    "BENCH_THROTTLE_THREADS": "2",
    "BENCH_RSS_WSP_DOCS": "5",
    "BENCH_LOG_BULK_BATCHES": "2",
    "BENCH_LOG_HTTP_REQUESTS": "60",
    "BENCH_LOG_VERIFY_LEAVES": "2000",
    "BENCH_LOG_PROOF_LEAVES": "100000",
    "BENCH_LOG_PROOFS": "10",
    "BENCH_READ_SCALES": "1000,2000",
    "BENCH_REVISION_DEPTH": "20",
    "BENCH_READ_CALLS": "5",
    "BENCH_ROUNDS": "2",
    "BENCH_PACE_LINKS": "4000",
    "BENCH_PACE_ALONE": "1000",
    "BENCH_FEED_ROUNDS": "2",
    "BENCH_FEED_REGISTERS": "20",
    "BENCH_FEED_RATE": "20",
    "BENCH_FEED_SECONDS": "2",
    "BENCH_FEED_SUBSCRIBERS": "5",
    "BENCH_HA_ROUNDS": "1",
    "BENCH_HA_REGISTERS": "10",
    "BENCH_PDF_PAGES": "5",
    "BENCH_PDF_ROUNDS": "1",
    "BENCH_PDF_RSS_MB": "2",
}


def main() -> None:
    for name, value in TINY.items():
        os.environ.setdefault(name, value)
    os.environ.pop("BENCH_ONLY", None)
    os.environ.pop("BENCH_REUSE_DB", None)
    results = Path(tempfile.mkdtemp(prefix="bench-smoke-")) / "results.json"
    os.environ["BENCH_RESULTS"] = str(results)
    from bench import run

    run.main()
    ratios = json.loads(results.read_text())["ratios"]
    missing = sorted(key for key, ratio in ratios.items() if ratio["ratio"] is None)
    if missing:
        sys.exit(f"bench smoke: no figure for {', '.join(missing)}")
    print(f"bench smoke: all {len(ratios)} ratios computed ({results})")


if __name__ == "__main__":
    main()
