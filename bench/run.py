"""`make bench`: how fast the registry is, beside PostgreSQL's own limit.

Runs on PostgreSQL only, in a fresh database, and writes bench/results.json.
Sizes can be reduced for a quick look: BENCH_READ_LINKS, BENCH_HTTP_REQUESTS,
BENCH_FANOUT_LINKS."""

from __future__ import annotations

import json
import os
import sys
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


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def main() -> None:
    url = _bench_database_url()
    # BENCH_REUSE_DB=1 keeps an earlier run's database (the 1,000,000-link corpus).
    if os.environ.get("BENCH_REUSE_DB") != "1":
        _recreate_database(url)
    os.environ["DATABASE_URL"] = url
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-not-secret-" + "x" * 40)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from io import StringIO

    out = StringIO()
    call_command("seed_demo", "--json", stdout=out)
    tokens = json.loads(out.getvalue())["tokens"]

    from bench import report, workloads

    results_path = ROOT / "bench" / "results.json"
    results: dict = {"database": "postgresql", "machine_cores": os.cpu_count()}
    if os.environ.get("BENCH_ONLY") and results_path.exists():
        # A partial run adds to the figures of the last full one.
        results = {**json.loads(results_path.read_text()), **results}
    steps = [
        ("baseline", workloads.baseline),
        ("bulk_register", workloads.bulk_register),
        ("fanout", workloads.fanout),
        ("wsp_import", workloads.wsp_import),
        ("http_register", lambda: workloads.http_register(tokens)),
        ("concurrency", lambda: workloads.concurrency(tokens)),
        ("reads_at_scale", lambda: workloads.reads_at_scale(tokens)),
    ]
    only = set(filter(None, os.environ.get("BENCH_ONLY", "").split(",")))
    for name, step in steps:
        if only and name not in only:
            continue
        print(f"… {name}", flush=True)
        results[name] = step()
        results_path.write_text(json.dumps(results, indent=2))
    report.print_table(results)
    print(f"\nwrote {ROOT / 'bench' / 'results.json'}")


if __name__ == "__main__":
    main()
