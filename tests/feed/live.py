"""Real processes for the feed's live tests and its bench: uvicorn serving the ASGI
application, the log's sequencer and delivery workers, and an SSE reader."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import requests

from tests.ops.live import PROJECT, free_port, server_env


@contextmanager
def process(command: list[str], env: dict[str, str], ready=None) -> Iterator[subprocess.Popen]:
    """A process group of ours, stopped with SIGTERM (then SIGKILL) at the end."""
    proc = subprocess.Popen(command, cwd=PROJECT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        if ready is not None:
            deadline = time.monotonic() + 60
            while not ready():
                assert proc.poll() is None, f"{command[:4]} exited {proc.returncode}"
                assert time.monotonic() < deadline, f"{command[:4]} did not start"
                time.sleep(0.2)
        yield proc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


@contextmanager
def uvicorn(database: str, **extra: str) -> Iterator[str]:
    """The ASGI application under uvicorn on a free loopback port; yields its base URL."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        try:
            return requests.get(f"{base}/healthz", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    command = [sys.executable, "-m", "uvicorn", "grounding.project.asgi:application",
               "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]  # fmt: skip
    with process(command, server_env(database, **extra), ready) as proc:
        proc.base = base
        yield base


@contextmanager
def sequencer(database: str, interval: float = 0.05) -> Iterator[subprocess.Popen]:
    command = [sys.executable, "manage.py", "run_sequencer", "--interval", str(interval)]
    with process(command, server_env(database)) as proc:
        yield proc


class SseReader:
    """Reads one text/event-stream response in a thread: (id, CloudEvent) pairs."""

    def __init__(self, base: str, dimension: str, token: str, last_id: str | None = None):
        headers = {"Authorization": f"Token {token}", "Accept": "text/event-stream"}
        if last_id:
            headers["Last-Event-ID"] = last_id
        self.response = requests.get(f"{base}/api/v1/events/", params={"dimension": dimension},
                                     headers=headers, stream=True, timeout=30)  # fmt: skip
        self.status = self.response.status_code
        self.events: list[tuple[str, dict]] = []
        self.opened = threading.Event()
        self.arrivals: list[float] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        fields: dict[str, str] = {}
        try:
            # chunk_size=1: requests' default waits for 512 bytes, and an idle stream
            # sends a dozen at a time.
            for line in self.response.iter_lines(chunk_size=1, decode_unicode=True):
                if line is None:
                    continue
                if line.startswith("retry:"):
                    self.opened.set()
                if line == "":
                    if "data" in fields:
                        self.events.append((fields["id"], json.loads(fields["data"])))
                        self.arrivals.append(time.time())
                    fields = {}
                elif not line.startswith(":") and ": " in line:
                    name, value = line.split(": ", 1)
                    fields[name] = value
        except (requests.RequestException, AttributeError, ValueError):
            pass  # closed by us

    def close(self) -> None:
        self.response.close()
        self._thread.join(timeout=5)
