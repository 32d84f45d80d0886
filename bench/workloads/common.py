"""What every measurement shares: the curator, a raw connection, a template link,
percentiles, and the writer subprocesses."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

from bench import app, generate

ROOT = Path(__file__).resolve().parent.parent.parent
# Links per register_many call, everywhere the bench registers in bulk.
BATCH = 1000


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, str(default)))


def raw_conn():
    """A plain psycopg connection that prepares no statement (prepare_threshold None):
    each execution is planned, as each of the registry's is (Django's client-side
    binding cursors prepare none)."""
    import psycopg

    return psycopg.connect(os.environ["DATABASE_URL"], prepare_threshold=None)


def template_link() -> uuid.UUID:
    """A link registered through the service: the rows COPY baselines clone."""
    link = app.register(actor=app.curator(), payload=generate.register_payload(0))
    return link.grounding_id


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def p50_ms(samples: list[float]) -> float:
    return ms(statistics.median(samples))


def writers(kind: str, *, count: int, batches: int, batch_size: int, offset: int,
            start_in: float = 20.0) -> list[dict]:  # fmt: skip
    """`count` bench.writer processes writing `batches` batches each, started together
    at a common wall-clock time; the JSON each printed."""
    start = time.time() + start_in  # every writer has built its batches and warmed up
    commands = [
        [sys.executable, "-m", "bench.writer", "--kind", kind, "--offset",
         str(offset + w * 1_000_000), "--batches", str(batches), "--batch-size",
         str(batch_size), "--start", str(start)]
        for w in range(count)
    ]  # fmt: skip
    procs = [subprocess.Popen(c, cwd=ROOT, stdout=subprocess.PIPE, text=True) for c in commands]
    runs = [json.loads(proc.communicate(timeout=900)[0]) for proc in procs]
    if any(proc.returncode for proc in procs):
        raise RuntimeError(f"a {kind} writer failed")
    return runs


def concurrent_writers(kind: str, *, batches: int, batch_size: int, offset: int) -> dict:
    """The same kind of batches from one writer process per core at once: how a
    deployment with several app server processes takes bulk writes."""
    count = os.cpu_count() or 2
    runs = writers(kind, count=count, batches=batches, batch_size=batch_size, offset=offset)
    wall = max(r["ended"] for r in runs) - min(r["started"] for r in runs)
    units = sum(r["units"] for r in runs)
    return {"writers": count, "units": units, "per_s": round(units / wall)}
