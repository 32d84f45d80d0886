"""The soak's smaller topology, from the prod smoke's parts: one PostgreSQL cluster
(`DatabaseTier.start_primary`), two gunicorn servers (`WebTier.start_app_server`)
connected to it directly, throttle counters in PostgreSQL; no replica, no PgBouncer,
no Redis, no nginx (the clients balance over both servers themselves)."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path

from tests.prod_smoke.procs import SmokeFailure, wait_until
from tests.prod_smoke.topology import Topology

SERVERS = ("web-a", "web-b")
WORKERS = 2
# The soak's own traffic must never be throttled; the throttle drill restarts the
# servers with THROTTLE_DRILL_RATES.
SOAK_RATES = "read=1000000/min,write=1000000/min,bulk=1000000/min"


@dataclass
class SoakTopology(Topology):
    throttle_rates: str = SOAK_RATES

    def app_env(self, name: str = "manage") -> dict[str, str]:
        env = super().app_env(name)
        for key in ("DATABASE_REPLICA_URL", "DATABASE_POOLER", "REDIS_URL"):
            env.pop(key, None)
        env["DATABASE_URL"] = self.primary_url() + f"?application_name={name}"
        env["GROUNDING_THROTTLE_RATES"] = self.throttle_rates
        # A client is told to come back soon: the drills' clients retry within a second.
        env["GROUNDING_DATABASE_RETRY_AFTER"] = "1"
        return env

    def url(self, server: str) -> str:
        return f"http://127.0.0.1:{self.ports[server]}"

    def start_servers(self) -> None:
        """Both app servers, started side by side (each waits for its /healthz)."""
        self.start_app_servers(workers=WORKERS)

    def restart_servers(self, throttle_rates: str) -> None:
        for name in SERVERS:
            service = self.services.pop(name)
            self.supervisor.services.remove(service)
            self.supervisor.stop(service)
        self.throttle_rates = throttle_rates
        self.start_servers()

    # -- gunicorn's workers ------------------------------------------------------------
    def workers(self, server: str) -> list[int]:
        """The pids of a server's workers: the children of its gunicorn master."""
        master = self.services[server].process.pid
        children = Path(f"/proc/{master}/task/{master}/children")
        try:
            return sorted(int(pid) for pid in children.read_text().split())
        except OSError:
            return sorted(
                int(entry.name)
                for entry in Path("/proc").iterdir()
                if entry.name.isdigit() and _parent(entry) == master
            )

    def worker_of(self, server: str, client_port: int) -> int | None:
        """The worker of `server` holding the database connection from `client_port`
        (pg_stat_activity's client_port): its socket's inode, found in /proc."""
        inode = _socket_inode(client_port, self.ports["primary"])
        if inode is None:
            return None
        for pid in self.workers(server):
            try:
                fds = list(Path(f"/proc/{pid}/fd").iterdir())
            except OSError:
                continue
            for fd in fds:
                try:
                    if os.readlink(fd) == f"socket:[{inode}]":
                        return pid
                except OSError:
                    continue
        return None

    def kill_worker(self, server: str, victim: int | None = None) -> tuple[int, list[int]]:
        """SIGKILL a worker of `server` (the first, unless `victim` is given); wait until
        gunicorn has replaced it. Returns the killed pid and the workers after."""
        before = self.workers(server)
        if len(before) != WORKERS:
            raise SmokeFailure(f"{server} has workers {before}, expected {WORKERS}")
        victim = before[0] if victim is None else victim
        os.kill(victim, signal.SIGKILL)
        after = wait_until(
            f"gunicorn replacing worker {victim} of {server}",
            lambda: (lambda now: now if len(now) == WORKERS and victim not in now else None)(
                self.workers(server)
            ),
            timeout=30,
            service=self.services[server],
        )
        return victim, after


def _parent(entry: Path) -> int | None:
    try:
        return int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _socket_inode(local_port: int, remote_port: int) -> int | None:
    """The inode of the loopback TCP socket from `local_port` to `remote_port`."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], fields[9]
            if int(local.rsplit(":", 1)[1], 16) == local_port and (
                int(remote.rsplit(":", 1)[1], 16) == remote_port
            ):
                return int(inode)
    return None
