"""One writer process for the concurrent figures: its own interpreter and connection,
as a second app server would have, started by workloads.concurrent_writers.

`--kind register` registers `--batches` batches of 1,000 links; `--kind wsp` imports
`--batches` batches of `--batch-size` generated WSP responses. Indices start at
`--offset` so writers never collide. Work starts at the wall-clock `--start`; the
start and end times, the units written (links or observations) and the process's
resident memory (VmRSS before the work, VmHWM: its peak during the work) are printed
as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", choices=["register", "wsp"], required=True)
    parser.add_argument("--offset", type=int, required=True)
    parser.add_argument("--batches", type=int, required=True)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--start", type=float, required=True, help="time.time() to begin at")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    import django

    django.setup()

    from bench import app, generate

    curator = app.curator()
    size = args.batch_size
    if args.kind == "register":
        batches = [
            [generate.register_payload(args.offset + b * size + i) for i in range(size)]
            for b in range(args.batches)
        ]

        def write(batch: list) -> int:
            app.register_many(actor=curator, items=batch)
            return len(batch)

        warm = [generate.register_payload(args.offset - 1)]
    else:
        rng = random.Random(args.offset)
        batches = [
            [generate.wsp_response(args.offset + b * size + i, rng) for i in range(size)]
            for b in range(args.batches)
        ]

        def write(batch: list) -> int:
            outcomes = app.import_wsp_documents(actor=curator, documents=batch)
            assert all(getattr(o, "created", False) for o in outcomes), outcomes
            return sum(len(d["observations"]) for d in batch)

        warm = [generate.wsp_response(args.offset - 1, rng)]
    # Warm this process (imports, caches, connection) before the common start.
    write(warm)
    time.sleep(max(0.0, args.start - time.time()))
    rss_before = _status_mb("VmRSS")
    _reset_peak()
    started = time.time()
    units = sum(write(batch) for batch in batches)
    ended = time.time()
    peak = _status_mb("VmHWM")
    print(json.dumps({"started": started, "ended": ended, "units": units,
                      "rss_before_mb": rss_before, "peak_rss_mb": peak}))  # fmt: skip


def _status_mb(key: str) -> float | None:
    """A memory figure of this process from /proc/self/status, in MB (None elsewhere)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith(f"{key}:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def _reset_peak() -> None:
    """VmHWM back to the current RSS (Linux: clear_refs 5), so the peak read after the
    work is the work's, not start-up's."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
    except OSError:
        pass


if __name__ == "__main__":
    main()
