"""HTTP under gunicorn: register beside the bare-insert floor and the naive peer, and
32 writers on one revision through two servers."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from bench import app, generate
from bench.naive import naive_payload
from bench.workloads.common import ROOT, env_int, ms, percentile, template_link

REGISTER = "/api/v1/groundings/"
CLIENTS = 16


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wsgi_app() -> str:
    """The project's WSGI application (settings.WSGI_APPLICATION) as gunicorn names it."""
    from django.conf import settings

    module, _, name = settings.WSGI_APPLICATION.rpartition(".")
    return f"{module}:{name}"


@contextmanager
def gunicorn(ports: list[int], workers: int, threads: int):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "bench.settings"}
    worker_class = os.environ.get("BENCH_GUNICORN_WORKER_CLASS", "sync")
    procs = []
    for port in ports:
        command = [
            str(Path(sys.executable).parent / "gunicorn"), _wsgi_app(),
            "--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--threads", str(threads),
            "--worker-class", worker_class, "--log-level", "warning",
        ]  # fmt: skip
        procs.append(
            subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
        )
    with serving(procs, ports):
        yield


@contextmanager
def serving(procs: list[subprocess.Popen], ports):
    """Once each port listens (30 s at most each), the servers serve until the block
    ends; then they are stopped."""
    try:
        for port in ports:
            deadline = time.time() + 30
            while time.time() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.2)
        time.sleep(1.0)
        yield
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=20)


def _loadgen(ports, path, token, bodies, *, clients, requests, seconds, method="POST",
             if_match="", barrier=False) -> dict:  # fmt: skip
    """Run bench.loadgen against the servers: its wall seconds, latencies and statuses."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(bodies, handle)
    command = [
        sys.executable, "-m", "bench.loadgen", "--ports", ",".join(map(str, ports)),
        "--path", path, "--method", method, "--token", token, "--body-file", handle.name,
        "--clients", str(clients), "--requests", str(requests), "--seconds", str(seconds),
    ]  # fmt: skip
    if if_match:
        command += ["--if-match", if_match]
    if barrier:
        command.append("--barrier")
    output = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    os.unlink(handle.name)
    return json.loads(output)


def _summary(runs: list[dict]) -> dict:
    """One figure of one or more load generator runs (their requests over their wall
    seconds, latencies pooled)."""
    latencies = [latency for run in runs for latency in run["latencies"]]
    wall = sum(run["wall_seconds"] for run in runs)
    statuses: dict[str, int] = {}
    for run in runs:
        for status, count in run["statuses"].items():
            statuses[status] = statuses.get(status, 0) + count
    return {
        "requests": len(latencies),
        "wall_seconds": round(wall, 3),
        "req_per_s": round(len(latencies) / wall, 1),
        "p50_ms": ms(percentile(latencies, 0.50)),
        "p99_ms": ms(percentile(latencies, 0.99)),
        "statuses": statuses,
    }


def http_register(tokens: dict) -> dict:
    """Register, the bare one-insert floor and the naive peer (bench.naive) on the same
    gunicorn, the same clients and requests each, in BENCH_HTTP_ROUNDS rounds that take
    turns, so that a busy machine slows all three alike."""
    requests = env_int("BENCH_HTTP_REQUESTS", 3000)
    rounds = env_int("BENCH_HTTP_ROUNDS", 3)
    workers = env_int("BENCH_GUNICORN_WORKERS", 2 * (os.cpu_count() or 2))
    threads = env_int("BENCH_GUNICORN_THREADS", 1)
    port = _free_port()
    token = tokens["curator"]
    # Distinct links per endpoint: the same values, never the same keys.
    bodies = [generate.register_payload(2_000_000 + i) for i in range(200)]
    naive = [naive_payload(generate.register_payload(2_100_000 + i)) for i in range(200)]
    endpoints = {"register": (REGISTER, bodies), "bare_insert_floor": ("/bench/bare/", [{}]),
                 "naive_peer": ("/bench/naive/", naive)}  # fmt: skip
    runs: dict[str, list[dict]] = {name: [] for name in endpoints}
    with gunicorn([port], workers, threads):
        for path, sent in endpoints.values():
            # Warm every worker on every endpoint before measuring.
            _loadgen([port], path, token, sent, clients=CLIENTS, requests=200, seconds=20)
        for turn in range(rounds):
            share = requests // rounds + (1 if turn < requests % rounds else 0)
            for name, (path, sent) in endpoints.items():
                runs[name].append(_loadgen([port], path, token, sent, clients=CLIENTS,
                                           requests=share, seconds=60))  # fmt: skip
    figures = {name: _summary(done) for name, done in runs.items()}
    for name, result in figures.items():
        if result["statuses"].get("201", 0) != result["requests"]:
            # Kept, and flagged: a failed request is a figure of its own.
            print(f"  ! {name}: not every request was created: {result['statuses']}",
                  file=sys.stderr)  # fmt: skip
    return {
        "gunicorn_workers": workers,
        "gunicorn_threads": threads,
        "clients": CLIENTS,
        # Each round the three endpoints in turn (bench/rounds.py).
        "rounds": [
            {name: _summary([done[turn]]) for name, done in runs.items()} for turn in range(rounds)
        ],
        **figures,
        "targets": {"req_per_s": 300, "p99_ms": 100},
    }


def concurrency(tokens: dict) -> dict:
    """32 writers on one revision through two gunicorn instances sharing the database."""
    grounding_id = template_link()
    ports = [_free_port(), _free_port()]
    bodies = [
        {"owner_ref": f"role:writer-{i}", "revision_reason": f"writer {i}"} for i in range(32)
    ]
    with gunicorn(ports, 2, 2):
        result = _summary([_loadgen(ports, f"{REGISTER}{grounding_id}/", tokens["curator"],
                                    bodies, clients=32, requests=32, seconds=60,
                                    method="PATCH", if_match='"1"', barrier=True)])  # fmt: skip
    link = app.GroundingLink.objects.get(pk=grounding_id)
    history = app.GroundingLink.history.filter(grounding_id=grounding_id).count()
    return {
        "writers": 32,
        "servers": 2,
        "statuses": result["statuses"],
        "successes": result["statuses"].get("200", 0),
        "final_revision": link.revision,
        "history_rows": history,
        "lost_updates": 0 if (link.revision == 2 and history == 2) else abs(link.revision - 2),
        "wall_ms": round(result["wall_seconds"] * 1000, 1),
    }
