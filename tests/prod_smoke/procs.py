"""Processes the smoke starts: each in its own process group, logged to a file, and
stopped on every way out (normal end, exception, SIGTERM/SIGINT, the time limit)."""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


class SmokeFailure(Exception):
    """A check failed or a part did not come up in time."""


def service_user() -> str | None:
    """The unprivileged user PostgreSQL, PgBouncer and nginx run as when we are root."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError as error:
        raise SmokeFailure("running as root but there is no `postgres` user") from error
    return "postgres"


def chown_tree(path: Path, user: str | None) -> None:
    if user is None:
        return
    entry = pwd.getpwnam(user)
    for root, dirs, files in os.walk(path):
        os.chown(root, entry.pw_uid, entry.pw_gid)
        for name in dirs + files:
            os.chown(os.path.join(root, name), entry.pw_uid, entry.pw_gid)


def free_ports(count: int) -> list[int]:
    """Distinct loopback ports nothing listens on right now."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _as_user(user: str | None) -> dict:
    if user is None:
        return {}
    entry = pwd.getpwnam(user)
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


def run(
    args: list[str],
    *,
    timeout: float,
    user: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess:
    """A one-off command, bounded in time; its output is returned, not printed."""
    try:
        result = subprocess.run(
            args,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=cwd,
            start_new_session=True,
            **_as_user(user),
        )
    except subprocess.TimeoutExpired as error:
        raise SmokeFailure(f"{args[0]} did not finish within {timeout:.0f}s") from error
    if check and result.returncode != 0:
        raise SmokeFailure(
            f"{' '.join(args[:3])}… exited {result.returncode}:\n"
            f"{(result.stdout + result.stderr)[-3000:]}"
        )
    return result


@dataclass
class Service:
    name: str
    process: subprocess.Popen
    log: Path
    stop_signal: int

    def alive(self) -> bool:
        return self.process.poll() is None

    def tail(self, lines: int = 30) -> str:
        try:
            text = self.log.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(text[-lines:])


@dataclass
class Supervisor:
    """Starts long-running parts and stops them all, newest first, exactly once."""

    logs: Path
    services: list[Service] = field(default_factory=list)
    # Run after the services are stopped: what they started outside their own process
    # group (Patroni's PostgreSQL runs in a session of its own).
    cleanups: list[Callable[[], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        atexit.register(self.stop_all)

    def start(
        self,
        name: str,
        args: list[str],
        *,
        stop_signal: int = signal.SIGTERM,
        user: str | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Service:
        log = self.logs / f"{name}.log"
        with log.open("ab") as handle:
            process = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=handle,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=cwd,
                start_new_session=True,  # its own process group: stopped as a whole
                **_as_user(user),
            )
        service = Service(name, process, log, stop_signal)
        self.services.append(service)
        return service

    def kill(self, service: Service) -> None:
        """SIGKILL the whole process group at once (master and workers): a crash."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(service.process.pid, signal.SIGKILL)
        service.process.wait(timeout=10)

    def stop(self, service: Service, timeout: float = 15) -> None:
        if service.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(service.process.pid, service.stop_signal)
            with contextlib.suppress(subprocess.TimeoutExpired):
                service.process.wait(timeout=timeout)
        # Whatever is left of the group (workers, backends) goes too.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(service.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            service.process.wait(timeout=5)

    def stop_all(self) -> None:
        while self.services:
            self.stop(self.services.pop())
        while self.cleanups:
            self.cleanups.pop()()

    def detach(self) -> None:
        """Leave everything running (HA_KEEP): nothing is stopped at exit."""
        atexit.unregister(self.stop_all)
        self.services.clear()
        self.cleanups.clear()


def wait_until(
    what: str,
    probe: Callable[[], T | None],
    *,
    timeout: float,
    interval: float = 0.2,
    service: Service | None = None,
) -> T:
    """Poll until `probe` returns something truthy; fail after `timeout` seconds, or at
    once when the service it waits for has exited."""
    deadline = time.monotonic() + timeout
    last_error = ""
    while time.monotonic() < deadline:
        if service is not None and not service.alive():
            raise SmokeFailure(
                f"{service.name} exited ({service.process.returncode}) while waiting for "
                f"{what}:\n{service.tail()}"
            )
        try:
            value = probe()
        except Exception as error:  # a part still starting refuses connections
            last_error = f" (last error: {error})"
            value = None
        if value:
            return value
        time.sleep(interval)
    raise SmokeFailure(f"timed out after {timeout:.0f}s waiting for {what}{last_error}")


def render(template: Path, target: Path, values: dict[str, object]) -> None:
    """Fill `{{name}}` placeholders (nginx and PgBouncer use `$` and braces themselves)."""
    text = template.read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", str(value))
    if "{{" in text:
        raise SmokeFailure(f"{template.name}: unfilled placeholder")
    target.write_text(text, encoding="utf-8")
