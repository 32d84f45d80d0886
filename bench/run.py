"""`make bench`: how fast the registry is, beside its limit measured in the same run.

Runs on PostgreSQL only, in its own database (BENCH_DATABASE, default
grounding_bench; dropped and recreated unless BENCH_REUSE_DB=1), prints one table
(path | registry | limit in the same run | ratio | target | met?) and writes
bench/results.json, whose `ratios` object holds each ratio with the two figures it
divides. Steps and the knobs that size them (defaults in brackets):

- bulk_register: register_many, batches of 1,000, each batch followed by a raw COPY
  and an executemany of as many clones of its rows into scratch tables, and a COPY
  into scratch tables with the real ones' foreign keys (context); then one writer
  process per core. BENCH_BULK_BATCHES [10]
- fanout: BENCH_FANOUT_LINKS [100000] links registered in bulk, then a change
  notification fanned out to every link of their answer, and of their source.
- wsp_import: one document per transaction, then import_wsp_documents in batches,
  each followed by a COPY of as many documents' rows into scratch tables (and into
  scratch tables with the foreign keys, for context).
  BENCH_WSP_DOCS [100], BENCH_WSP_BATCHED_DOCS [1000], BENCH_WSP_BATCH_SIZE [100]
- http_register: under gunicorn, register, the bare one-insert floor and the naive
  peer (bench/naive.py), the same clients and requests each, taking turns in rounds.
  BENCH_HTTP_REQUESTS [3000], BENCH_HTTP_ROUNDS [3], BENCH_GUNICORN_WORKERS [2 per
  core], BENCH_GUNICORN_THREADS [1], BENCH_GUNICORN_WORKER_CLASS [sync]
- concurrency: 32 writers on one revision through two gunicorn servers.
- throttle: the exact throttle counter before a view, queries and µs per request,
  alone and from BENCH_THROTTLE_THREADS [8] threads on one caller, beside DRF's
  throttle over the database cache it replaced. BENCH_THROTTLE_REQUESTS [2000]
- memory: peak RSS (VmHWM) of a writer process during one 1,000-link bulk
  registration and one batch import. BENCH_RSS_WSP_DOCS [100]
- transparency: bulk registration and HTTP register with the log and with it off,
  taking turns, the sequencer service running (the earlier steps' queued writes
  integrated first); checkpoint lag under that load; verify_log beside what a
  verifier must do at least (bench/verify_floor.py), and --skip-commitments beside
  hashing the leaves and the tree's nodes (the demo log grown first to
  BENCH_LOG_VERIFY_LEAVES leaves); inclusion proofs at 10k, 100k and 1M leaves.
  BENCH_LOG_BULK_BATCHES [6], BENCH_LOG_HTTP_REQUESTS [2000],
  BENCH_LOG_VERIFY_LEAVES [100000], BENCH_LOG_PROOF_LEAVES [1000000],
  BENCH_LOG_PROOFS [200], BENCH_LOG_PARTS=writes,verify,proofs [all]: only these
  parts (verify alone: BENCH_ONLY=transparency BENCH_LOG_PARTS=verify)
- log_pace: does the log keep up, as production runs it: `manage.py run_sequencer`
  in its own process, two bulk writers at full speed (HTTP bulk requests of 1,000
  links to gunicorn, or the bulk service in two processes), leaves integrated beside
  links written, the queue, the checkpoint lag; the sequencer alone on a backlog
  (bench/workloads/log_pace.py). BENCH_PACE_LINKS [100000], BENCH_PACE_TRANSPORT=
  http|service [http], BENCH_PACE_ALONE [10000]
- reads_at_scale: the link tables emptied, then grown by COPY to each size; at each,
  the list page and one raw psycopg query returning the same page (its floor), taking
  turns, p50 of BENCH_READ_CALLS calls each; each documented ordering's first page and the page
  from the middle of the list; then revisions/{1,100,1000}. BENCH_READ_LINKS [1000000] (sizes
  10,000, 100,000, 1,000,000 up to it, and it), or BENCH_READ_SCALES=a,b,c;
  BENCH_REVISION_DEPTH [1000]: the revised link's depth (revisions/{1,100,depth}).
  BENCH_READ_CALLS [30]: timed calls of each page at each size.

- event_feed: registration with the outbox beside without it (taking turns), webhook
  delivery lag at a steady 200 writes/s to a local receiver, and the stream's fan-out
  to 100 idle subscribers under uvicorn with its memory (bench/workloads/feed.py).
  BENCH_FEED_ROUNDS [6], BENCH_FEED_REGISTERS [300], BENCH_FEED_RATE [200],
  BENCH_FEED_SECONDS [15], BENCH_FEED_SUBSCRIBERS [100]

Ratios worth acting on (bench/rounds.py): each ratio is the median of BENCH_ROUNDS
[3] rounds or more (a step's own knob may ask for more: BENCH_HTTP_ROUNDS,
BENCH_FEED_ROUNDS; bulk_register and wsp_import take each batch and its COPY as a
round), each round measuring the path and its limit in turn, printed as
`median× (min–max, n rounds)`; every round's figures are kept in the step's
`"rounds"` list in results.json.

A step is one line of `steps` in main() below: its name (results.json's key, and
what BENCH_ONLY names) and a function returning its figures (a dict; a `"rounds"`
list of dicts shaped like those figures if it measures in rounds); a ratio of its
figures is one `Ratio` in bench/ratios.py; a tiny size for `make bench-smoke` goes
into bench/smoke.py's TINY.
- pdf_import: pages/s importing a BENCH_PDF_PAGES [200]-page text PDF beside the
  extraction library alone on the same file in this process (bench/workloads/pdf.py),
  and the peak RSS of a gunicorn worker importing a BENCH_PDF_RSS_MB [50] MB PDF.

BENCH_RESULTS [bench/results.json]: where the figures are written.
`make bench-smoke` (bench/smoke.py) runs every step at a tiny size, to prove the bench
still runs (CI), not to measure.

BENCH_ONLY=step,… runs some steps and keeps the others' figures from the last run;
ratios are computed only from figures of the current run (each step carries its
run_id)."""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
# Its own database, dropped and recreated on each run unless BENCH_REUSE_DB=1.
BENCH_DATABASE = os.environ.get("BENCH_DATABASE", "grounding_bench")


def _bench_database_url() -> str:
    url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
    parts = urlsplit(url)
    if not parts.scheme.startswith("postgres"):
        sys.exit("make bench needs PostgreSQL: set DATABASE_URL=postgres://…")
    return urlunsplit(parts._replace(path=f"/{BENCH_DATABASE}"))


def _recreate_database(url: str) -> None:
    import psycopg

    admin = urlunsplit(urlsplit(url)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{BENCH_DATABASE}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{BENCH_DATABASE}"')


def main() -> None:
    url = _bench_database_url()
    # BENCH_REUSE_DB=1 keeps an earlier run's database (the 1,000,000-link corpus).
    if os.environ.get("BENCH_REUSE_DB") != "1":
        _recreate_database(url)
    os.environ["DATABASE_URL"] = url
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-not-secret-" + "x" * 40)
    # The transparency log's signing key (a bench-only seed): the sequencer the log
    # steps run signs each checkpoint and refuses to start without one.
    os.environ.setdefault(
        "GROUNDING_LOG_SIGNING_KEY", "YmVuY2gtb25seS1ub3Qtc2VjcmV0LXNlZWQtMzJieXQ="
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from io import StringIO

    out = StringIO()
    call_command("seed_demo", "--json", stdout=out)
    tokens = json.loads(out.getvalue())["tokens"]

    from bench import ratios, report, workloads

    results_path = Path(os.environ.get("BENCH_RESULTS", ROOT / "bench" / "results.json"))
    run_id = uuid.uuid4().hex
    results: dict = {"database": "postgresql", "machine_cores": os.cpu_count(), "run_id": run_id}
    if os.environ.get("BENCH_ONLY") and results_path.exists():
        # A partial run adds to the figures of the last full one.
        results = {**json.loads(results_path.read_text()), **results}
    steps = [
        ("bulk_register", workloads.bulk_register),
        ("fanout", workloads.fanout),
        ("wsp_import", workloads.wsp_import),
        ("http_register", lambda: workloads.http_register(tokens)),
        ("concurrency", lambda: workloads.concurrency(tokens)),
        ("memory", workloads.peak_rss),
        ("throttle", workloads.throttle_cost),
        ("transparency", lambda: workloads.transparency_log(tokens)),
        ("log_pace", lambda: workloads.log_pace(tokens)),
        ("reads_at_scale", lambda: workloads.reads_at_scale(tokens)),
        ("event_feed", lambda: workloads.event_feed(tokens)),
        # Issue 36: register on a Patroni leader, synchronous replication on and off.
        ("ha_sync_commit", workloads.ha_sync_commit),
        ("pdf_import", lambda: workloads.pdf_import(tokens)),
    ]
    only = set(filter(None, os.environ.get("BENCH_ONLY", "").split(",")))
    for name, step in steps:
        if only and name not in only:
            continue
        print(f"… {name}", flush=True)
        started = time.perf_counter()
        results[name] = {**step(), "run_id": run_id,
                         "step_seconds": round(time.perf_counter() - started, 1)}  # fmt: skip
        results["ratios"] = ratios.compute(results)
        results_path.write_text(json.dumps(results, indent=2))
    results["ratios"] = ratios.compute(results)
    results_path.write_text(json.dumps(results, indent=2))
    report.print_table(results)
    print(f"\nwrote {results_path}")


if __name__ == "__main__":
    main()
