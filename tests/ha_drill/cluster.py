"""The database tier of `make ha-drill`: etcd (three members), Patroni (three
PostgreSQL members, one YAML file each) and HAProxy routing to the leader and to the
asynchronous standby by Patroni's REST checks. The prod smoke's `Topology` does the
rest (PgBouncer, the app servers, nginx): its `primary` and `replica` ports are
HAProxy's here, so everything it starts follows the leader."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
from dataclasses import dataclass, field
from pathlib import Path

import requests

from tests.ha_drill.backups import Backups
from tests.prod_smoke.procs import Service, SmokeFailure, chown_tree, render, wait_until
from tests.prod_smoke.topology import Topology

HERE = Path(__file__).resolve().parent
MEMBERS = ("pg-1", "pg-2", "pg-3")
ETCD = ("etcd-1", "etcd-2", "etcd-3")
SUPERUSER_PASSWORD = secrets.token_urlsafe(16)


@dataclass
class HaTopology(Topology, Backups):
    """`ports`: `primary` and `replica` are HAProxy's leader and reads ports; each
    member has its PostgreSQL port (`pg-1`) and its REST port (`pg-1-rest`); each etcd
    member its client and peer ports."""

    demo: dict = field(default_factory=dict)  # seed_demo's answer: the roles' tokens
    journal: Path | None = None  # the feed receiver's deliveries
    webhook: dict = field(default_factory=dict)

    def port_names(self) -> list[str]:
        names = super().port_names()
        names += [*MEMBERS, *(f"{m}-rest" for m in MEMBERS)]
        names += [f"{e}-{kind}" for e in ETCD for kind in ("client", "peer")]
        return [*names, "receiver", "restore-latest", "restore-before", "web-restored"]

    def __post_init__(self) -> None:
        super().__post_init__()
        self.pgbackrest_conf = self.scratch / "pgbackrest" / "pgbackrest.conf"

    def app_env(self, name: str = "manage") -> dict[str, str]:
        env = super().app_env(name)
        # A client told to come back soon: a failover takes seconds, not minutes.
        env["GROUNDING_DATABASE_RETRY_AFTER"] = "1"
        # Every disposal also journaled off the database, for a restore to apply again
        # (docs/architecture.md "Restoring from a backup").
        env["GROUNDING_DISPOSAL_JOURNAL"] = str(self.scratch / "journal" / "disposals.jsonl")
        return env

    def pgbouncer_settings(self) -> list[str]:
        return [
            "; The leader moves: after a failed login to the old one, try the new one",
            "; within a second (the default waits 15 s), and give up on a connect soon.",
            "server_login_retry = 1",
            "server_connect_timeout = 3",
            "; A client waits at most this long for a server connection during a failover,",
            "; then gets an error its keyed retry mends (under gunicorn's 30 s timeout).",
            "query_wait_timeout = 20",
        ]

    # -- addresses ---------------------------------------------------------------------
    def etcd_urls(self) -> list[str]:
        return [f"http://127.0.0.1:{self.ports[f'{e}-client']}" for e in ETCD]

    def rest(self, member: str) -> str:
        return f"http://127.0.0.1:{self.ports[f'{member}-rest']}"

    def data_dir(self, member: str) -> Path:
        return self.scratch / member / "data"

    def patroni_config(self, member: str) -> Path:
        return self.scratch / member / "patroni.yml"

    # -- etcd --------------------------------------------------------------------------
    def start_etcd(self) -> None:
        cluster = ",".join(f"{e}=http://127.0.0.1:{self.ports[f'{e}-peer']}" for e in ETCD)
        for name in ETCD:
            data = self.scratch / name
            data.mkdir(mode=0o700)
            chown_tree(data, self.user)
            client = f"http://127.0.0.1:{self.ports[f'{name}-client']}"
            peer = f"http://127.0.0.1:{self.ports[f'{name}-peer']}"
            self.services[name] = self.supervisor.start(
                name,
                [self.programs["etcd"], "--name", name, "--data-dir", str(data),
                 "--listen-client-urls", client, "--advertise-client-urls", client,
                 "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                 "--initial-cluster", cluster, "--initial-cluster-state", "new",
                 "--initial-cluster-token", f"grounding-ha-{self.scratch.name}",
                 # Two loaded cores: elections only when a member is really gone.
                 "--heartbeat-interval", "200", "--election-timeout", "2000",
                 "--log-level", "warn"],
                user=self.user,
                cwd=data,
            )  # fmt: skip
        for name, url in zip(ETCD, self.etcd_urls(), strict=True):
            wait_until(
                f"{name} healthy",
                lambda url=url: requests.get(f"{url}/health", timeout=2).json()["health"] == "true",
                timeout=60,
                service=self.services[name],
            )

    # -- Patroni -----------------------------------------------------------------------
    def write_patroni_config(self, member: str) -> None:
        directory = self.scratch / member
        directory.mkdir(exist_ok=True)
        render(
            HERE / "patroni.yml.in",
            self.patroni_config(member),
            {
                "name": member,
                "rest_port": self.ports[f"{member}-rest"],
                "etcd_hosts": ",".join(f"127.0.0.1:{self.ports[f'{e}-client']}" for e in ETCD),
                "pg_port": self.ports[member],
                "data_dir": self.data_dir(member),
                "bin_dir": self.pgbin,
                "dir": directory,
                "password": SUPERUSER_PASSWORD,
                "sockets": self.sockets,
                "pgbackrest": self.programs["pgbackrest"],
                "pgbackrest_conf": self.pgbackrest_conf,
            },
        )
        chown_tree(directory, self.user)

    def start_member(self, member: str) -> Service:
        """The member's Patroni (which starts, clones or rewinds its PostgreSQL)."""
        service = self.supervisor.start(
            f"patroni-{member}",
            [self.programs["patroni"], str(self.patroni_config(member))],
            user=self.user,
            cwd=self.scratch / member,
            # A lost host, also at the end (kill_postmasters stops its PostgreSQL).
            stop_signal=signal.SIGKILL,
            # Patroni's Python must be Debian's (python3-etcd), not this venv's.
            env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": str(self.scratch)},
        )
        self.services[f"patroni-{member}"] = service
        return service

    def start_patroni(self) -> str:
        """pg-1 bootstraps (initdb) and leads; the others clone it (pg_basebackup) and
        follow. Returns the leader's name once both standbys stream, one synchronously."""
        self.sockets.mkdir(exist_ok=True)
        chown_tree(self.sockets, self.user)
        self.supervisor.cleanups.append(self.kill_postmasters)
        for member in MEMBERS:
            self.write_patroni_config(member)
        self.start_member(MEMBERS[0])
        wait_until(
            "pg-1 bootstrapped and leading",
            lambda: self.role(MEMBERS[0]) == "primary",
            timeout=90,
            service=self.services["patroni-pg-1"],
        )
        for member in MEMBERS[1:]:
            self.start_member(member)
        return self.wait_healthy(timeout=120)

    def patroni(self, member: str) -> dict:
        return requests.get(f"{self.rest(member)}/patroni", timeout=2).json()

    def role(self, member: str) -> str | None:
        """What the member's Patroni says it runs as (`primary`, `replica`), if it
        answers and its PostgreSQL runs."""
        try:
            status = self.patroni(member)
        except (requests.RequestException, ValueError):
            return None
        if status.get("state") != "running":
            return None
        return "primary" if status.get("role") in ("master", "primary") else status.get("role")

    def cluster(self, members: tuple[str, ...] = MEMBERS) -> dict:
        """Patroni's view of the cluster (from etcd), asked of the first member that
        answers."""
        for member in members:
            with contextlib.suppress(requests.RequestException, ValueError):
                return requests.get(f"{self.rest(member)}/cluster", timeout=2).json()
        raise SmokeFailure("no Patroni member answers /cluster")

    def leader(self, members: tuple[str, ...] = MEMBERS) -> str | None:
        """The member that holds the leader key and runs as a primary."""
        for entry in self.cluster(members)["members"]:
            if entry["role"] == "leader" and entry.get("state") == "running":
                return entry["name"] if self.role(entry["name"]) == "primary" else None
        return None

    def standbys(self, leader: str | None = None) -> dict[str, str]:
        """Member → its pg_stat_replication sync_state on the leader (`sync`, `async`)."""
        leader = leader or self.leader()
        if leader is None:
            raise SmokeFailure("no leader to ask for its standbys")
        with self.connect(leader, "postgres") as conn:
            rows = conn.execute(
                "SELECT application_name, sync_state FROM pg_stat_replication "
                "WHERE state = 'streaming'"
            ).fetchall()
        return dict(rows)

    def sync_standby(self) -> str | None:
        """The synchronous standby, when Patroni (its /sync key in etcd) and the leader
        (pg_stat_replication) agree on it: the only member a switchover may go to."""
        named = [m["name"] for m in self.cluster()["members"] if m["role"] == "sync_standby"]
        streaming = [m for m, state in self.standbys().items() if state == "sync"]
        return named[0] if len(named) == 1 and named == streaming else None

    def wait_healthy(self, timeout: float, members: tuple[str, ...] = MEMBERS) -> str:
        """Wait until one of `members` leads through HAProxy and every other streams,
        one of them synchronously; the leader's name."""

        def healthy() -> str | None:
            leader = self.leader(members)
            if leader is None:
                return None
            with self.connect(leader, "postgres") as conn:
                if conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
                    return None
            standbys = self.standbys(leader)
            others = set(members) - {leader}
            if set(standbys) != others or "sync" not in standbys.values():
                return None
            # And Patroni says so too (it marks a restarted member running a moment later).
            return leader if all(self.role(m) == "replica" for m in others) else None

        return wait_until(
            f"a leader and {len(members) - 1} streaming standbys (one synchronous)",
            healthy,
            timeout=timeout,
            interval=0.3,
        )

    # -- losing a member ---------------------------------------------------------------
    def postmaster(self, member: str) -> int | None:
        try:
            return int((self.data_dir(member) / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def kill_member(self, member: str) -> list[int]:
        """The member's host lost: its Patroni and its PostgreSQL (postmaster and every
        backend) SIGKILLed in one go. The pids killed."""
        service = self.services[f"patroni-{member}"]
        victims = [service.process.pid]
        postmaster = self.postmaster(member)
        if postmaster is not None:
            victims += [postmaster, *_children(postmaster)]
        for pid in victims:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(service.process.pid, signal.SIGKILL)
        service.process.wait(timeout=10)
        return victims

    def kill_postmasters(self) -> None:
        """At the end: Patroni starts PostgreSQL in a session of its own, so stopping
        Patroni's process group may leave it running."""
        for member in MEMBERS:
            postmaster = self.postmaster(member)
            if postmaster is None:
                continue
            for pid in [postmaster, *_children(postmaster)]:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)

    # -- HAProxy -----------------------------------------------------------------------
    def start_haproxy(self) -> None:
        directory = self.scratch / "haproxy"
        directory.mkdir()

        def servers() -> str:
            return "\n".join(
                f"    server {m} 127.0.0.1:{self.ports[m]} check port {self.ports[f'{m}-rest']}"
                for m in MEMBERS
            )

        config = directory / "haproxy.cfg"
        render(
            HERE / "haproxy.cfg.in",
            config,
            {
                "leader_port": self.ports["primary"],
                "reads_port": self.ports["replica"],
                "leader_servers": servers(),
                "reads_servers": servers(),
            },
        )
        chown_tree(directory, self.user)
        self.services["haproxy"] = service = self.supervisor.start(
            "haproxy",
            [self.programs["haproxy"], "-db", "-f", str(config)],
            user=self.user,
            cwd=directory,
        )

        def routes() -> bool:
            with self.connect("primary", "postgres") as conn:
                leader = not conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]
            with self.connect("replica", "postgres") as conn:
                return leader and conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]

        wait_until("HAProxy routing to the leader and a standby", routes, timeout=30,
                   service=service)  # fmt: skip


def _children(pid: int) -> list[int]:
    """Every descendant of `pid` (from /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        parents.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
