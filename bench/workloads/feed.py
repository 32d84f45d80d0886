"""The event feed (issue 29): registration with the outbox beside the same without it,
webhook delivery lag at a steady write rate to a local receiver, and the stream's
fan-out to idle subscribers with the memory they cost.

- outbox: registrations through the service, taking turns in rounds with the outbox's
  listener on (one subscription owed every event) and off (the transparency log's
  listener on in both). BENCH_FEED_ROUNDS [6], BENCH_FEED_REGISTERS [300]
- delivery: BENCH_FEED_WRITERS [2] paced writer processes at BENCH_FEED_RATE [200]
  registrations/s in all for BENCH_FEED_SECONDS [15], `deliver_events` (4 threads) and
  the log's sequencer running, a threaded receiver on loopback; lag = arrival at the
  receiver − the event's `time`.
- stream: uvicorn serving grounding.project.asgi; BENCH_FEED_SUBSCRIBERS [100] idle
  text/event-stream subscribers; the server's RSS before and after they connect, and
  how long one new event takes to reach all of them.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from bench import app, generate
from bench.workloads.common import ROOT, env_int, ms, percentile
from bench.workloads.serving import _free_port

STEWARD = "demo-steward"


def event_feed(tokens: dict[str, str]) -> dict:
    from django.conf import settings

    settings.GROUNDING_WEBHOOK_ALLOW_PRIVATE = True  # the receivers are on loopback
    parts = set(os.environ.get("BENCH_FEED_PARTS", "outbox,delivery,stream").split(","))
    measured = {
        "outbox": _outbox,
        "delivery": _delivery_lag,
        "stream": lambda: _stream_fanout(tokens["curator"]),
    }
    out = {name: measure() for name, measure in measured.items() if name in parts}
    # The outbox's rounds, at the step's level where bench/ratios.py reads them.
    out["rounds"] = (out.get("outbox") or {}).pop("round_figures", [])
    return out


def _steward():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username=STEWARD)


def _subscribe(url: str):
    from feed import services

    return services.create_webhook(actor=_steward(), dimension=app.DIMENSION, url=url).webhook


def _outbox() -> dict:
    from feed import outbox, services
    from policies import audit

    rounds, per = env_int("BENCH_FEED_ROUNDS", 6), env_int("BENCH_FEED_REGISTERS", 300)
    curator = app.curator()
    webhook = _subscribe("http://127.0.0.1:9/never-delivered")
    timings: dict[str, list[float]] = {"with": [], "without": []}
    offset = 40_000_000
    try:
        for n in range(rounds):
            for mode in ("with", "without") if n % 2 == 0 else ("without", "with"):
                audit.on_applied("feed", outbox.on_applied if mode == "with" else _nothing)
                payloads = [generate.register_payload(offset + i) for i in range(per)]
                offset += per
                started = time.perf_counter()
                for payload in payloads:
                    app.register(actor=curator, payload=payload)
                timings[mode].append(time.perf_counter() - started)
    finally:
        audit.on_applied("feed", outbox.on_applied)
        services.delete_webhook(actor=_steward(), webhook_id=webhook.pk)
    total = rounds // 2 * 0 + per * rounds
    return {
        # Each round's two phases (with, without) taking turns (bench/rounds.py).
        "round_figures": [
            {
                "outbox": {
                    "with_outbox": {"per_s": round(per / w, 1)},
                    "without_outbox": {"per_s": round(per / wo, 1)},
                }
            }
            for w, wo in zip(timings["with"], timings["without"], strict=True)
        ],
        "rounds": rounds,
        "registers_per_round": per,
        "with_outbox": {"per_s": round(total / sum(timings["with"]), 1)},
        "without_outbox": {"per_s": round(total / sum(timings["without"]), 1)},
    }


def _nothing(events) -> None:
    return None


class _Receiver:
    def __init__(self) -> None:
        self.lags: list[float] = []
        self.written_at: list[float] = []  # each lag's event time, in the same order
        self.ids: set[str] = set()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                arrived = time.time()
                event = json.loads(body)
                from datetime import datetime

                at = datetime.fromisoformat(event["time"].replace("Z", "+00:00")).timestamp()
                outer.lags.append(arrived - at)
                outer.written_at.append(at)
                outer.ids.add(event["id"])
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "DJANGO_SETTINGS_MODULE": "bench.settings", **extra}


def _delivery_lag() -> dict:
    from feed import log_link, services

    rate, seconds = env_int("BENCH_FEED_RATE", 200), env_int("BENCH_FEED_SECONDS", 15)
    writers = env_int("BENCH_FEED_WRITERS", 2)
    receiver = _Receiver()
    # A subscription is owed the events of the leaves integrated after it is created
    # (feed.worker.fan_out): the earlier steps' leaves first, so the lag is the run's.
    log_link.integrate()
    webhook = _subscribe(receiver.url)
    env = _env(GROUNDING_WEBHOOK_ALLOW_PRIVATE="1")
    procs = [
        subprocess.Popen([sys.executable, "manage.py", "deliver_events", "--threads", "4",
                          "--poll", "0.05"], cwd=ROOT, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        subprocess.Popen([sys.executable, "manage.py", "run_sequencer", "--interval", "0.05"],
                         cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL),
    ]  # fmt: skip
    try:
        start = time.time() + 15
        writing = [
            subprocess.Popen([sys.executable, "-m", "bench.feed_writer", "--rate",
                              str(rate / writers), "--seconds", str(seconds), "--offset",
                              str(50_000_000 + w * 1_000_000), "--start", str(start)],
                             cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
            for w in range(writers)
        ]  # fmt: skip
        runs = [json.loads(p.communicate(timeout=600)[0]) for p in writing]
        written = sum(r["written"] for r in runs)
        deadline = time.time() + 120
        while len(receiver.ids) < written and time.time() < deadline:
            time.sleep(0.1)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)
        receiver.server.shutdown()
        services.delete_webhook(actor=_steward(), webhook_id=webhook.pk)
    window = (min(r["started"] for r in runs), max(r["ended"] for r in runs))
    wall = window[1] - window[0]
    lags = receiver.lags
    return {
        "target_writes_per_s": rate,
        "writes_per_s": round(written / wall, 1),
        "written": written,
        "delivered": len(receiver.ids),
        "late_writes": sum(r["late"] for r in runs),
        "retried_writes": sum(r["retried"] for r in runs),
        "lag_p50_ms": ms(statistics.median(lags)) if lags else None,
        "lag_p99_ms": ms(percentile(lags, 0.99)) if lags else None,
        "lag_max_ms": ms(max(lags)) if lags else None,
        "lag_p50_ms_by_third": _by_third(receiver.written_at, lags, window, 0.5),
        "lag_p99_ms_by_third": _by_third(receiver.written_at, lags, window, 0.99),
    }


def _by_third(
    written_at: list[float], lags: list[float], window: tuple[float, float], q: float
) -> list[float | None]:
    """The lag's percentile among the events written in each third of the paced run
    (the writers' warm-up events left out): a lag that grows (the workers falling
    behind) shows as a rising row."""
    first, last = window
    span = (last - first) / 3 or 1.0
    thirds: list[list[float]] = [[], [], []]
    for at, lag in zip(written_at, lags, strict=True):
        if first <= at <= last:
            thirds[min(2, int((at - first) / span))].append(lag)
    return [ms(percentile(third, q)) if third else None for third in thirds]


def _rss_kib(pid: int) -> int:
    """The resident set of a process and its children (uvicorn's workers)."""
    total = 0
    pids = [pid]
    children = f"/proc/{pid}/task/{pid}/children"
    if os.path.exists(children):
        with open(children) as handle:
            pids += [int(p) for p in handle.read().split()]
    for one in pids:
        with open(f"/proc/{one}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total


def _stream_fanout(token: str) -> dict:
    import requests

    subscribers = env_int("BENCH_FEED_SUBSCRIBERS", 100)
    port = _free_port()
    env = _env(GROUNDING_STREAM_POLL_SECONDS="0.1")
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "grounding.project.asgi:application", "--host",
         "127.0.0.1", "--port", str(port), "--log-level", "warning", "--limit-concurrency",
         "1000", "--backlog", "1024"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    sequencer = subprocess.Popen(
        [sys.executable, "manage.py", "run_sequencer", "--interval", "0.05"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    readers: list[_Reader] = []
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if requests.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                time.sleep(0.2)
        latest = _latest_cursor(base, token)
        warm = _Reader(base, token, latest)
        warm.opened.wait(30)
        warm.close()
        time.sleep(1)
        before = _rss_kib(server.pid)
        readers = [_Reader(base, token, latest) for _ in range(subscribers)]
        opened = sum(reader.opened.wait(60) for reader in readers)
        time.sleep(2)
        after = _rss_kib(server.pid)
        threads = _threads(server.pid)
        written = time.time()
        app.register(actor=app.curator(), payload=generate.register_payload(60_000_000))
        for reader in readers:
            reader.got.wait(30)
        reached = [reader.at - written for reader in readers if reader.at]
    finally:
        for reader in readers:
            reader.close()
        for proc in (server, sequencer):
            proc.terminate()
            proc.wait(timeout=30)
    return {
        "subscribers": subscribers,
        "connected": opened,
        "server": "uvicorn (ASGI), 1 process",
        "rss_before_mb": round(before / 1024, 1),
        "rss_with_subscribers_mb": round(after / 1024, 1),
        "kib_per_subscriber": round((after - before) / max(1, opened), 1),
        "server_threads": threads,
        "reached": len(reached),
        "fanout_p50_ms": ms(statistics.median(reached)) if reached else None,
        "fanout_max_ms": ms(max(reached)) if reached else None,
    }


def _threads(pid: int) -> int:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return 0


def _latest_cursor(base: str, token: str) -> str | None:
    import requests

    cursor = None
    while True:
        params = {"dimension": app.DIMENSION, "limit": "500"}
        if cursor:
            params["after"] = cursor
        page = requests.get(f"{base}/api/v1/events/", params=params, timeout=30,
                            headers={"Authorization": f"Token {token}"}).json()  # fmt: skip
        if not page["events"]:
            return cursor
        cursor = page["next"]


class _Reader:
    """One idle text/event-stream subscriber, resumed from `after`: http.client reads
    each line as it comes (chunked), in a thread."""

    def __init__(self, base: str, token: str, after: str | None) -> None:
        import http.client
        from urllib.parse import urlsplit

        parts = urlsplit(base)
        headers = {"Authorization": f"Token {token}", "Accept": "text/event-stream"}
        if after:
            headers["Last-Event-ID"] = after
        self.opened, self.got = threading.Event(), threading.Event()
        self.at: float | None = None
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=300)
        self.connection.request("GET", f"/api/v1/events/?dimension={app.DIMENSION}",
                                headers=headers)  # fmt: skip
        self.response = self.connection.getresponse()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            while line := self.response.readline():
                if line.startswith(b"retry:"):
                    self.opened.set()
                elif line.startswith(b"data:") and self.at is None:
                    self.at = time.time()
                    self.got.set()
        except Exception:
            pass

    def close(self) -> None:
        import socket

        sock = self.connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.connection.close()
