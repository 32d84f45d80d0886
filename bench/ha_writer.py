"""`python -m bench.ha_writer REST DSN ROUNDS REGISTERS`: the writer of the bench step
`ha_sync_commit` (bench/workloads/ha.py), a process of its own with DATABASE_URL the
Patroni leader: migrates, seeds the demo, then registers REGISTERS links one per
transaction with Patroni's synchronous_mode on and off in turn, ROUNDS times, and
prints the figures as one line of JSON. Outside bench.workloads, whose package
imports the app before Django is set up."""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _switch(rest: str, dsn: str, synchronous: bool) -> float:
    """Patroni's synchronous_mode set, and taken by the leader; how long that took."""
    import psycopg
    import requests

    from tests.prod_smoke.procs import wait_until

    started = time.monotonic()
    answer = requests.patch(f"{rest}/config", json={"synchronous_mode": synchronous}, timeout=30)
    answer.raise_for_status()

    def taken() -> bool:
        with psycopg.connect(dsn, autocommit=True) as conn:
            names = conn.execute("SHOW synchronous_standby_names").fetchone()[0]
            syncs = conn.execute(
                "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'"
            ).fetchone()[0]
        return bool(names) and syncs == 1 if synchronous else not names and syncs == 0

    wait_until(f"synchronous_mode={synchronous} taken by the leader", taken, timeout=60)
    return time.monotonic() - started


def _writer(rest: str, dsn: str, rounds: int, registers: int) -> dict:
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    call_command("seed_demo", "--json", stdout=open(os.devnull, "w"))  # noqa: SIM115
    from bench import app, generate

    curator = app.curator()
    seconds: dict[str, list[float]] = {"sync": [], "async": []}
    each: dict[str, list[float]] = {"sync": [], "async": []}
    index = 0
    for n in range(rounds):
        for mode in ("sync", "async") if n % 2 == 0 else ("async", "sync"):
            _switch(rest, dsn, mode == "sync")
            started = time.perf_counter()
            for _ in range(registers):
                one = time.perf_counter()
                app.register(actor=curator, payload=generate.register_payload(index))
                each[mode].append(time.perf_counter() - one)
                index += 1
            seconds[mode].append(time.perf_counter() - started)

    def figures(mode: str) -> dict:
        return {
            "registers_per_s": round(registers * rounds / sum(seconds[mode]), 1),
            "p50_ms": round(statistics.median(each[mode]) * 1000, 2),
            "per_round_per_s": [round(registers / s, 1) for s in seconds[mode]],
        }

    sync, unsync = figures("sync"), figures("async")
    return {
        "rounds": rounds,
        "registers_per_mode_and_round": registers,
        "synchronous": sync,
        "asynchronous": unsync,
        # The throughput kept with synchronous replication, and what it costs.
        "sync_over_async": round(sync["registers_per_s"] / unsync["registers_per_s"], 3),
        "sync_cost_pct": round(100 * (1 - sync["registers_per_s"] / unsync["registers_per_s"]), 1),
    }


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    rest_url, superuser_dsn, rounds_arg, registers_arg = sys.argv[1:5]
    print(json.dumps(_writer(rest_url, superuser_dsn, int(rounds_arg), int(registers_arg))))
