"""Profile one of the registry's slow paths under cProfile, in the bench database.

    DATABASE_URL=postgres://…/<db> BENCH_DATABASE=<bench db> \\
        .venv/bin/python -m bench.profiling register_many [--top 30] [--out file.prof]

Paths: register_many (one batch of 1,000 links), register (HTTP POST through
Django's test client, in process: middleware, DRF, service, rendering; no
gunicorn), bare and naive (the floor and the naive peer, the same way), wsp (one
import_wsp_documents batch of 100 documents), list (the list page the bench times).
The database must exist (run `make bench` once, or BENCH_REUSE_DB=1 keeps it);
nothing is dropped. Prints the wall time per unit, then the top functions by own
time, by cumulative time, and the application's own functions by cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATHS = ("register_many", "register", "bare", "naive", "wsp", "list")


def _setup() -> None:
    from bench.run import _bench_database_url

    os.environ["DATABASE_URL"] = _bench_database_url()
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-not-secret-" + "x" * 40)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def _client():
    from django.test import Client

    from bench import app
    from policies import tokens

    key = tokens.issue_token(actor=None, user=app.curator()).key
    return Client(HTTP_AUTHORIZATION=f"Token {key}")


def _work(path: str, n: int):
    """(units, a function doing the work once) for `path`."""
    import json

    from bench import app, generate
    from bench.naive import naive_payload
    from bench.workloads.reads import LIST

    offset = 90_000_000 + random.randrange(10**6) * 1000
    if path == "register_many":
        items = [generate.register_payload(offset + i) for i in range(1000)]
        return 1000, lambda: app.register_many(actor=app.curator(), items=items)
    if path == "wsp":
        rng = random.Random(offset)
        documents = [generate.wsp_response(offset + i, rng) for i in range(100)]
        units = sum(len(d["observations"]) for d in documents)
        return units, lambda: app.import_wsp_documents(actor=app.curator(), documents=documents)
    client = _client()
    if path == "list":
        return n, lambda: [client.get(LIST) for _ in range(n)]
    url, make = {
        "register": ("/api/v1/groundings/", generate.register_payload),
        "naive": ("/bench/naive/", lambda i: naive_payload(generate.register_payload(i))),
        "bare": ("/bench/bare/", lambda i: {}),
    }[path]
    bodies = [json.dumps(make(offset + i)) for i in range(n)]

    def post_all():
        for body in bodies:
            response = client.post(url, body, content_type="application/json")
            assert response.status_code == 201, response.content[:300]

    return n, post_all


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path", choices=PATHS)
    parser.add_argument("-n", type=int, default=200, help="requests (HTTP paths, list)")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--out", help="also write the raw profile here (snakeviz, pstats)")
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall", "none"),
        default="cpu",
        help="cpu (default): this process's CPU time, so waits on the database and on "
        "a busy machine are left out; wall: elapsed time, waits included; none: no "
        "cProfile (its overhead skews call-heavy code), for a sampling profiler: "
        "py-spy record --format raw -- python -m bench.profiling … --clock none, then "
        "keep the stacks through `measured`",
    )
    parser.add_argument("--repeat", type=int, default=1, help="do the work this many times")
    args = parser.parse_args()
    _setup()
    # Warm (imports, caches, connection) outside the profile.
    units, work = _work(args.path, min(args.n, 20))
    work()
    runs = [_work(args.path, args.n) for _ in range(args.repeat)]
    units = sum(u for u, _ in runs)

    def measured() -> None:
        for _, work in runs:
            work()

    profiler = cProfile.Profile(time.process_time if args.clock == "cpu" else time.perf_counter)
    started, cpu = time.perf_counter(), time.process_time()
    if args.clock == "none":
        measured()
    else:
        profiler.runcall(measured)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    per_unit = f"{wall / units * 1e6:,.0f} µs wall, {cpu / units * 1e6:,.0f} µs CPU"
    print(f"{args.path}: {units} units; per unit {per_unit} of this process "
          f"({args.clock} clock)")  # fmt: skip
    if args.clock == "none":
        return
    if args.out:
        profiler.dump_stats(args.out)
    # Own time overall, then cumulative time overall and within the application.
    application = r"/(grounding|policies|evidence)/"
    for order, restriction in (("tottime", ()), ("cumulative", ()), ("cumulative", (application,))):
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out).sort_stats(order)
        stats.print_stats(*restriction, args.top)
        print(out.getvalue())


if __name__ == "__main__":
    main()
