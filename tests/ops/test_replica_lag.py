"""A real streaming replica's lag, as an app server sees it: caught up behind an idle
primary is `ok` (however old its last replayed commit), replay held back past
DATABASE_REPLICA_MAX_LAG is `degraded`, caught up again is `ok`, stopped is `degraded`.

Real parts: a scratch PostgreSQL primary and its standby (`initdb`, `pg_basebackup -R`)
on free loopback ports, run as the `postgres` user, and gunicorn serving
grounding.project.wsgi against them. Only the replica check of /readyz is read: the
scratch database holds no schema (its 503 for pending migrations is not the point).
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import requests

from tests.ops.live import free_port, gunicorn

BIN = Path("/usr/lib/postgresql/15/bin")


def _user() -> dict:
    entry = pwd.getpwnam("postgres")
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


def _available() -> str:
    if not (BIN / "pg_ctl").exists():
        return f"no PostgreSQL 15 programs in {BIN}"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root without a `postgres` user to run PostgreSQL as"
    return ""


def _run(*command: str) -> None:
    kwargs = _user() if os.geteuid() == 0 else {}
    subprocess.run(command, check=True, capture_output=True, timeout=120, **kwargs)


def _dsn(port: int) -> str:
    return f"host=127.0.0.1 port={port} user=postgres dbname=postgres connect_timeout=5"


def _wait(condition, timeout: float = 30, what: str = ""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            found = condition()
        except psycopg.OperationalError:
            found = None
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout} s: {what}")


@pytest.fixture
def pair() -> Iterator[dict]:
    """A primary and its streaming standby: {"primary": port, "standby": port, ...}."""
    reason = _available()
    if reason:
        pytest.skip(reason)
    scratch = Path(tempfile.mkdtemp(prefix="replica-lag-", dir="/tmp"))
    scratch.chmod(0o755)
    if os.geteuid() == 0:
        shutil.chown(scratch, "postgres", "postgres")
    ports = {"primary": free_port(), "standby": free_port()}
    started = []
    try:
        primary, standby = scratch / "primary", scratch / "standby"
        _run(
            str(BIN / "initdb"),
            "-D",
            str(primary),
            "--auth=trust",
            "--username=postgres",
            "--no-instructions",
        )
        with (primary / "postgresql.conf").open("a") as conf:
            conf.write("\nwal_level = replica\nmax_wal_senders = 4\nfsync = off\n")
        for side, data in (("primary", primary), ("standby", standby)):
            if side == "standby":
                _run(
                    str(BIN / "pg_basebackup"),
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(ports["primary"]),
                    "-U",
                    "postgres",
                    "-D",
                    str(data),
                    "-R",
                    "-X",
                    "stream",
                    "-c",
                    "fast",
                )
            _run(
                str(BIN / "pg_ctl"),
                "-D",
                str(data),
                "-w",
                "-l",
                str(scratch / f"{side}.log"),
                "-o",
                f"-p {ports[side]} -k {scratch} -c listen_addresses=127.0.0.1",
                "start",
            )
            started.append(data)
        yield {**ports, "standby_data": standby}
    finally:
        for data in reversed(started):
            subprocess.run(
                [str(BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                capture_output=True,
                timeout=60,
                **(_user() if os.geteuid() == 0 else {}),
            )
        shutil.rmtree(scratch, ignore_errors=True)


def _replica_check(base: str) -> str:
    return requests.get(base + "/readyz", timeout=10).json()["checks"]["replica"]


def test_a_streaming_replica_is_judged_by_its_real_lag(pair):
    primary = psycopg.connect(_dsn(pair["primary"]), autocommit=True)
    standby = psycopg.connect(_dsn(pair["standby"]), autocommit=True)
    primary.execute("CREATE TABLE written (n int)")
    primary.execute("INSERT INTO written VALUES (1)")
    url = "postgres://postgres@127.0.0.1:{}/postgres"
    with gunicorn(
        url.format(pair["primary"]),
        DATABASE_REPLICA_URL=url.format(pair["standby"]),
        DATABASE_REPLICA_MAX_LAG="1",
    ) as base:
        # Caught up, and idle for longer than the limit: not lagging.
        _wait(
            lambda: standby.execute(
                "SELECT now() - pg_last_xact_replay_timestamp() > interval '2 s'"
            ).fetchone()[0],
            what="the standby idle past the limit",
        )
        assert _replica_check(base) == "ok"
        # Replay held back while the primary writes: degraded once behind past 1 s.
        standby.execute("SELECT pg_wal_replay_pause()")
        primary.execute("INSERT INTO written VALUES (2)")
        _wait(
            lambda: standby.execute(
                "SELECT pg_last_wal_receive_lsn() > pg_last_wal_replay_lsn()"
            ).fetchone()[0],
            what="WAL received and not replayed",
        )
        _wait(lambda: _replica_check(base) == "degraded", what="the replica degraded")
        standby.execute("SELECT pg_wal_replay_resume()")
        _wait(lambda: _replica_check(base) == "ok", what="the replica back")
        # A stopped replica: degraded, and the probe answers within its deadline.
        standby.close()
        _run(str(BIN / "pg_ctl"), "-D", str(pair["standby_data"]), "-m", "immediate", "stop")
        _wait(lambda: _replica_check(base) == "degraded", what="the stopped replica degraded")
        started = time.monotonic()
        assert _replica_check(base) == "degraded"
        assert time.monotonic() - started < 5  # a deadline, not a speed
    primary.close()
