"""Real servers for the ops tests: gunicorn serving grounding.project.wsgi in a subprocess,
and a database that accepts TCP connections and never answers (loopback only)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests
from django.conf import settings

PROJECT = Path(settings.BASE_DIR)
SECRET = "test-only-" + "x" * 40


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class HungListener:
    """A TCP listener that accepts every connection and never sends a byte."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(256)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)  # held open, never answered

    @property
    def url(self) -> str:
        return f"postgres://grounding@127.0.0.1:{self.port}/grounding"

    def __enter__(self) -> HungListener:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        # shutdown() wakes the accept() call; close() alone may not.
        with suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self._thread.join(timeout=5)
        for conn in self.accepted:
            conn.close()


def database_url(alias: str = "default") -> str:
    """A URL for this test run's (already created and migrated) PostgreSQL database."""
    db = settings.DATABASES[alias]
    user = quote(db.get("USER") or "", safe="")
    password = f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else ""
    host, port = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


def superuser():
    """An autocommit psycopg connection to this test run's PostgreSQL database, as the
    suite's own user: for terminating, pausing or watching other sessions."""
    import psycopg

    return psycopg.connect(database_url().replace("postgres://", "postgresql://"), autocommit=True)


def wait_for(condition: Callable[[], Any], timeout: float = 60, what: str = "") -> Any:
    """`condition()`'s first truthy value, polled until `timeout` seconds (generous:
    a condition met returns at once; only a failure waits it out)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.005)
    raise AssertionError(f"not within {timeout} s: {what}")


def wait_backend_gone(admin, pid: int, what: str = "the backend gone") -> None:
    """Until the server backend `pid` has left pg_stat_activity (ended by the server or
    terminated), watched on `admin` (`superuser()`)."""
    wait_for(
        lambda: (
            not admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
        ),
        what=what,
    )


def server_env(database: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    env.pop("REDIS_URL", None)
    env.update(
        DJANGO_SETTINGS_MODULE="grounding.project.settings",
        DJANGO_SECRET_KEY=SECRET,
        DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
        DJANGO_LOG_LEVEL="ERROR",
        DATABASE_URL=database,
        PYTHONPATH=str(PROJECT),
    )
    env.update(extra)
    return env


@contextmanager
def gunicorn(database: str, *, workers: int = 1, threads: int = 2, **extra: str) -> Iterator[str]:
    """gunicorn on a free loopback port; yields its base URL once /healthz answers."""
    port = free_port()
    command = [
        sys.executable, "-m", "gunicorn", "grounding.project.wsgi",
        "--bind", f"127.0.0.1:{port}",
        "--workers", str(workers), "--threads", str(threads), "--timeout", "30",
    ]  # fmt: skip
    log = (PROJECT / "test-artifacts").joinpath(f"gunicorn-{port}.log")
    log.parent.mkdir(exist_ok=True)
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=PROJECT,
            env=server_env(database, **extra),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                assert process.poll() is None, log.read_text(errors="replace")[-3000:]
                try:
                    if requests.get(f"{base}/healthz", timeout=2).status_code == 200:
                        break
                except requests.RequestException:
                    pass
                assert time.monotonic() < deadline, "gunicorn did not start within 60 s"
                time.sleep(0.2)
            yield base
        finally:
            # Only the process group this helper started.
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=5)
    log.unlink(missing_ok=True)


_PREPARE = """
import django
django.setup()
from django.contrib.auth import get_user_model
from django.core.management import call_command
from policies import tokens
call_command("migrate", verbosity=0)
user = get_user_model().objects.create_user("chunked-client")
print(tokens.issue_token(actor=None, user=user).key)
"""


def sqlite_database_with_token(directory: Path) -> tuple[str, str]:
    """A migrated SQLite file database holding one user; (its URL, the user's token)."""
    database = f"sqlite:///{directory / 'served.sqlite3'}"
    result = subprocess.run(
        [sys.executable, "-c", _PREPARE],
        cwd=PROJECT,
        env=server_env(database),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return database, result.stdout.strip().splitlines()[-1]


def raw_request(base: str, head: str, body_chunks: list[bytes] | None = None) -> tuple[int, bytes]:
    """Send `head` (request line and headers) and, when given, a chunked body; return the
    status and body of the answer (the connection is closed after it)."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as conn:
        conn.sendall(head.replace("\n", "\r\n").encode() + b"\r\n")
        for chunk in body_chunks or []:
            conn.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        if body_chunks is not None:
            conn.sendall(b"0\r\n\r\n")
        answer = b""
        while part := conn.recv(65536):
            answer += part
    headers, _, content = answer.partition(b"\r\n\r\n")
    return int(headers.split(b" ", 2)[1]), content
