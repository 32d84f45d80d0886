"""The database tier: a PostgreSQL primary, its streaming replica, and PgBouncer in
transaction mode in front of the primary."""

from __future__ import annotations

import secrets
import signal
from pathlib import Path

import psycopg

from tests.prod_smoke.procs import Service, Supervisor, chown_tree, render, run, wait_until

HERE = Path(__file__).resolve().parent
DATABASE = "grounding"
APP_USER = "grounding"
APP_PASSWORD = secrets.token_urlsafe(16)
ADMIN_PASSWORD = secrets.token_urlsafe(16)
POOL_SIZE = 4


class DatabaseTier:
    """Starts the database tier of a `Topology` (whose ports, scratch directory and
    supervisor it uses)."""

    scratch: Path
    supervisor: Supervisor
    user: str | None
    ports: dict[str, int]
    services: dict[str, Service]
    pgbin: Path
    sockets: Path
    programs: dict[str, str]

    def superuser_dsn(self, side: str, dbname: str = DATABASE) -> str:
        return (
            f"host=127.0.0.1 port={self.ports[side]} user=postgres dbname={dbname} "
            "application_name=prod-smoke connect_timeout=5"
        )

    def connect(self, side: str, dbname: str = DATABASE) -> psycopg.Connection:
        return psycopg.connect(self.superuser_dsn(side, dbname), autocommit=True)

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
        self.create_app_database()

    def create_app_database(self) -> None:
        """The app's role and database, on the primary."""
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
    def pgbouncer_settings(self) -> list[str]:
        """Lines added to pgbouncer.ini (a topology whose primary moves adds its own)."""
        return []

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
                "more": "\n".join(self.pgbouncer_settings()),
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
