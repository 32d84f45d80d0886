"""The Debian programs the topology runs: found on the machine, or apt-installed."""

from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path

from tests.prod_smoke.procs import SmokeFailure, run

# Program → the Debian package that provides it.
PACKAGES = {
    "nginx": "nginx",
    "pgbouncer": "pgbouncer",
    "openssl": "openssl",
    "initdb": "postgresql",
    "redis-server": "redis-server",
    # `make ha-drill` (tests/ha_drill): Patroni on etcd, HAProxy, pgBackRest.
    "patroni": "patroni",
    "patronictl": "patroni",
    "etcd": "etcd-server",
    "etcdctl": "etcd-client",
    "haproxy": "haproxy",
    "pgbackrest": "pgbackrest",
    # Patroni's etcd client (its etcd3 module builds on it); a Recommends of `patroni`.
    "python3-etcd": "python3-etcd",
}
# What `make prod-smoke` runs (the default of ensure_packages).
PROD_SMOKE = ("nginx", "pgbouncer", "openssl", "initdb", "redis-server")


def _postgres_bin() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    return Path(found[-1]).parent if found else None


def _python_module(module: str) -> str | None:
    """Where Debian's python3 finds `module` (Patroni runs on /usr/bin/python3)."""
    found = run(
        ["/usr/bin/python3", "-c", f"import {module}; print({module}.__file__)"],
        timeout=30,
        check=False,
    )
    if found.returncode != 0:
        return None
    return found.stdout.strip() or None


def _program(name: str) -> str | None:
    if name == "initdb":
        directory = _postgres_bin()
        return str(directory / "initdb") if directory else None
    if name == "python3-etcd":
        return _python_module("etcd") if os.path.exists("/usr/bin/python3") else None
    return shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


def ensure_packages(names: tuple[str, ...] = PROD_SMOKE) -> dict[str, str]:
    """Install with apt whatever program of `names` (the prod smoke's by default) is
    missing; return where each one is."""
    missing = sorted({PACKAGES[name] for name in names if _program(name) is None})
    if missing:
        print(f"   apt-get install -y {' '.join(missing)}", flush=True)
        sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        run([*sudo, "apt-get", "update", "-qq"], timeout=300, env=env)
        run([*sudo, "apt-get", "install", "-y", "-qq", *missing], timeout=600, env=env)
    paths = {name: _program(name) for name in names}
    absent = [name for name, path in paths.items() if path is None]
    if absent:
        raise SmokeFailure(f"still missing after apt-get: {', '.join(absent)}")
    return paths  # type: ignore[return-value]
