"""The parts of the production topology, each started from its Debian package."""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import requests

from tests.prod_smoke.procs import (
    Service,
    SmokeFailure,
    Supervisor,
    chown_tree,
    free_ports,
    render,
    run,
    service_user,
    wait_until,
)

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent.parent
DATABASE = "grounding"
APP_USER = "grounding"
APP_PASSWORD = secrets.token_urlsafe(16)
ADMIN_PASSWORD = secrets.token_urlsafe(16)
POOL_SIZE = 4
SERVERS = ("web-a", "web-b")

# Program → the Debian package that provides it.
PACKAGES = {
    "nginx": "nginx",
    "pgbouncer": "pgbouncer",
    "openssl": "openssl",
    "initdb": "postgresql",
    "redis-server": "redis-server",
}


def _postgres_bin() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    return Path(found[-1]).parent if found else None


def _program(name: str) -> str | None:
    if name == "initdb":
        directory = _postgres_bin()
        return str(directory / "initdb") if directory else None
    return shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


def ensure_packages() -> dict[str, str]:
    """Install with apt whatever program is missing; return where each one is."""
    missing = sorted({PACKAGES[name] for name in PACKAGES if _program(name) is None})
    if missing:
        print(f"   apt-get install -y {' '.join(missing)}", flush=True)
        sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        run([*sudo, "apt-get", "update", "-qq"], timeout=300, env=env)
        run([*sudo, "apt-get", "install", "-y", "-qq", *missing], timeout=600, env=env)
    paths = {name: _program(name) for name in PACKAGES}
    absent = [name for name, path in paths.items() if path is None]
    if absent:
        raise SmokeFailure(f"still missing after apt-get: {', '.join(absent)}")
    return paths  # type: ignore[return-value]


@dataclass
class Topology:
    scratch: Path
    supervisor: Supervisor
    programs: dict[str, str]
    user: str | None = field(default_factory=service_user)
    ports: dict[str, int] = field(default_factory=dict)
    services: dict[str, Service] = field(default_factory=dict)
    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(50))

    def __post_init__(self) -> None:
        names = ["primary", "replica", "pgbouncer", "redis", *SERVERS, "https", "http"]
        self.ports = dict(zip(names, free_ports(len(names)), strict=True))
        self.pgbin = Path(self.programs["initdb"]).parent
        self.sockets = self.scratch / "sockets"

    # -- addresses ---------------------------------------------------------------------
    def superuser_dsn(self, side: str, dbname: str = DATABASE) -> str:
        return (
            f"host=127.0.0.1 port={self.ports[side]} user=postgres dbname={dbname} "
            "application_name=prod-smoke connect_timeout=5"
        )

    def connect(self, side: str, dbname: str = DATABASE) -> psycopg.Connection:
        return psycopg.connect(self.superuser_dsn(side, dbname), autocommit=True)

    def primary_url(self) -> str:
        """Direct to the primary: migrations and one-off commands."""
        return f"postgres://{APP_USER}:{APP_PASSWORD}@127.0.0.1:{self.ports['primary']}/{DATABASE}"

    def base_url(self) -> str:
        return f"https://localhost:{self.ports['https']}"

    def app_env(self, name: str = "manage") -> dict[str, str]:
        """The environment of an app server (and of one-off commands, `name=manage`)."""
        pooled = f"127.0.0.1:{self.ports['pgbouncer']}"
        replica = f"127.0.0.1:{self.ports['replica']}"
        keep = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
        return {
            **keep,
            "PYTHONPATH": str(PROJECT),
            "DJANGO_SETTINGS_MODULE": "grounding.project.settings",
            "DJANGO_ENV": "production",
            # Configured by the environment alone: a developer's .env (DEBUG on) must
            # not reach a production server.
            "GROUNDING_ENV_FILE": "",
            "DJANGO_SECRET_KEY": self.secret_key,
            "DJANGO_ALLOWED_HOSTS": "localhost,127.0.0.1",
            "DJANGO_CSRF_TRUSTED_ORIGINS": self.base_url(),
            "DJANGO_STATIC_ROOT": str(self.scratch / "static"),
            "DJANGO_LOG_LEVEL": "WARNING",
            # Writes through PgBouncer; the settings it needs follow from this.
            "DATABASE_URL": f"postgres://{APP_USER}:{APP_PASSWORD}@{pooled}/{DATABASE}"
            f"?application_name={name}",
            "DATABASE_POOLER": "transaction",
            "DATABASE_REPLICA_URL": f"postgres://{APP_USER}@{replica}/{DATABASE}"
            f"?application_name={name}",
            "GROUNDING_SERVER_NAME": name,
            # The throttle counters every server shares (as REDIS_URL in production):
            # kept off the database, so a read touches the replica alone.
            "REDIS_URL": f"redis://127.0.0.1:{self.ports['redis']}/0",
            # The checks send a few hundred writes a minute from one demo user.
            "GROUNDING_THROTTLE_RATES": "read=100000/min,write=100000/min,bulk=10000/min",
        }

    def manage(self, *args: str, env: dict[str, str] | None = None, timeout: float = 180):
        return run(
            [sys.executable, "manage.py", *args],
            env=env or self.app_env(),
            cwd=PROJECT,
            timeout=timeout,
        )

    # -- PostgreSQL --------------------------------------------------------------------
    def start_primary(self) -> None:
        data = self.scratch / "primary"
        self.sockets.mkdir()
        chown_tree(self.scratch, self.user)
        run(
            [
                str(self.pgbin / "initdb"),
                "-D",
                str(data),
                "--auth=trust",  # loopback only, in a scratch directory
                "--username=postgres",
                "--encoding=UTF8",
                "--no-instructions",
            ],
            user=self.user,
            cwd=self.scratch,
            timeout=120,
        )
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(
                "\n# prod-smoke\nwal_level = replica\nmax_wal_senders = 4\n"
                "hot_standby = on\nmax_connections = 60\nshared_buffers = 32MB\n"
                "fsync = off\nsynchronous_commit = on\n"
            )
        self._start_postgres("primary", data)
        with self.connect("primary", "postgres") as conn:
            conn.execute(f"CREATE ROLE {APP_USER} LOGIN PASSWORD '{APP_PASSWORD}'")
            conn.execute(f"CREATE DATABASE {DATABASE} OWNER {APP_USER}")

    def start_replica(self) -> None:
        data = self.scratch / "replica"
        run(
            [
                str(self.pgbin / "pg_basebackup"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.ports["primary"]),
                "-U",
                "postgres",
                "-D",
                str(data),
                "-R",  # standby.signal and primary_conninfo: a streaming replica
                "-X",
                "stream",
                "-c",
                "fast",
            ],
            user=self.user,
            cwd=self.scratch,
            timeout=120,
        )
        self._start_postgres("replica", data)

    def _start_postgres(self, side: str, data: Path) -> None:
        service = self.supervisor.start(
            side,
            [
                str(self.pgbin / "postgres"),
                "-D",
                str(data),
                "-p",
                str(self.ports[side]),
                "-k",
                str(self.sockets),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                f"cluster_name=smoke-{side}",
            ],
            stop_signal=signal.SIGINT,  # fast shutdown
            user=self.user,
            cwd=self.scratch,
        )
        self.services[side] = service
        wait_until(
            f"PostgreSQL {side} on port {self.ports[side]}",
            lambda: self.connect(side, "postgres").close() or True,
            timeout=60,
            service=service,
        )

    # -- PgBouncer ---------------------------------------------------------------------
    def start_redis(self) -> None:
        """A Redis of the smoke's own (nothing on disk) for the shared throttle counters."""
        service = self.supervisor.start(
            "redis",
            [
                self.programs["redis-server"],
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.ports["redis"]),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.scratch),
            ],
        )
        self.services["redis"] = service

        def answers() -> bool:
            import socket

            with socket.create_connection(("127.0.0.1", self.ports["redis"]), timeout=1) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")

        wait_until("Redis", answers, timeout=30, service=service)

    def start_pgbouncer(self) -> None:
        directory = self.scratch / "pgbouncer"
        directory.mkdir()
        (directory / "userlist.txt").write_text(
            f'"{APP_USER}" "{APP_PASSWORD}"\n"pgbouncer_admin" "{ADMIN_PASSWORD}"\n'
        )
        (directory / "userlist.txt").chmod(0o600)
        render(
            HERE / "pgbouncer.ini.in",
            directory / "pgbouncer.ini",
            {
                "dir": directory,
                "port": self.ports["pgbouncer"],
                "primary_port": self.ports["primary"],
                "pool_size": POOL_SIZE,
            },
        )
        chown_tree(directory, self.user)
        service = self.supervisor.start(
            "pgbouncer",
            [self.programs["pgbouncer"], str(directory / "pgbouncer.ini")],
            user=self.user,
            cwd=directory,
        )
        self.services["pgbouncer"] = service
        wait_until(
            "PgBouncer",
            lambda: self.pgbouncer_show("VERSION"),
            timeout=30,
            service=service,
        )

    def pgbouncer_show(self, what: str) -> list[dict]:
        """SHOW … on PgBouncer's admin console (simple query protocol only)."""
        with (
            psycopg.connect(
                host="127.0.0.1",
                port=self.ports["pgbouncer"],
                user="pgbouncer_admin",
                password=ADMIN_PASSWORD,
                dbname="pgbouncer",
                autocommit=True,
                cursor_factory=psycopg.ClientCursor,
                connect_timeout=5,
            ) as conn,
            conn.cursor() as cursor,
        ):
            cursor.execute(f"SHOW {what}")
            names = [column.name for column in cursor.description or []]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    # -- app servers -------------------------------------------------------------------
    def start_app_server(self, name: str) -> Service:
        gunicorn = Path(sys.executable).with_name("gunicorn")
        service = self.supervisor.start(
            name,
            [
                str(gunicorn),
                "grounding.project.wsgi",
                "--bind",
                f"127.0.0.1:{self.ports[name]}",
                "--workers",
                "2",
                "--threads",
                "4",
                "--timeout",
                "30",
                "--graceful-timeout",
                "5",
                "--access-logfile",
                "-",
                "--error-logfile",
                "-",
            ],
            stop_signal=signal.SIGINT,  # quick shutdown
            env=self.app_env(name),
            cwd=PROJECT,
        )
        self.services[name] = service
        url = f"http://127.0.0.1:{self.ports[name]}/healthz"
        wait_until(
            f"{name} /healthz",
            lambda: requests.get(url, timeout=2).status_code == 200,
            timeout=60,
            service=service,
        )
        return service

    # -- nginx -------------------------------------------------------------------------
    def start_nginx(self) -> None:
        directory = self.scratch / "nginx"
        (directory / "tmp").mkdir(parents=True)
        run(
            [
                self.programs["openssl"],
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=DNS:localhost,IP:127.0.0.1",
                "-keyout",
                str(directory / "key.pem"),
                "-out",
                str(directory / "cert.pem"),
            ],
            timeout=60,
        )
        servers = "\n".join(
            f"        server 127.0.0.1:{self.ports[name]} max_fails=1 fail_timeout=10s;"
            for name in SERVERS
        )
        render(
            HERE / "nginx.conf.in",
            directory / "nginx.conf",
            {
                "dir": directory,
                "http_port": self.ports["http"],
                "https_port": self.ports["https"],
                "upstream_servers": servers,
            },
        )
        shutil.copy(HERE / "proxy_params.conf", directory / "proxy_params.conf")
        chown_tree(directory, self.user)
        nginx = [self.programs["nginx"], "-p", str(directory), "-c", str(directory / "nginx.conf")]
        run([*nginx, "-e", str(directory / "error.log"), "-t"], user=self.user, timeout=30)
        service = self.supervisor.start(
            "nginx",
            [*nginx, "-e", str(directory / "error.log")],
            user=self.user,
            cwd=directory,
        )
        self.services["nginx"] = service
        self.cert = directory / "cert.pem"
        wait_until(
            "nginx over HTTPS",
            lambda: requests.get(f"{self.base_url()}/healthz", verify=self.cert, timeout=2).ok,
            timeout=30,
            service=service,
        )
