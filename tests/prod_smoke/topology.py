"""The production topology on loopback: its ports and addresses, the environment of
its app servers, and its parts (`databases.DatabaseTier`, `web.WebTier`), each
started from its Debian package (`packages.ensure_packages`)."""

from __future__ import annotations

import base64
import os
import secrets
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests.prod_smoke.databases import APP_PASSWORD, APP_USER, DATABASE, DatabaseTier
from tests.prod_smoke.packages import ensure_packages
from tests.prod_smoke.procs import Service, Supervisor, free_ports, run, service_user
from tests.prod_smoke.web import PROJECT, SERVERS, WebTier

__all__ = ["SERVERS", "Topology", "ensure_packages"]


@dataclass
class Topology(DatabaseTier, WebTier):
    scratch: Path
    supervisor: Supervisor
    programs: dict[str, str]
    user: str | None = field(default_factory=service_user)
    ports: dict[str, int] = field(default_factory=dict)
    services: dict[str, Service] = field(default_factory=dict)
    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(50))
    # The transparency log's signing key (a base64 Ed25519 seed), the smoke's own.
    log_key: str = field(default_factory=lambda: base64.b64encode(os.urandom(32)).decode())

    def port_names(self) -> list[str]:
        """Every port the topology listens on, by name (a larger topology adds its own)."""
        return ["primary", "replica", "pgbouncer", "redis", *SERVERS, "https", "http"]

    def __post_init__(self) -> None:
        names = self.port_names()
        self.ports = dict(zip(names, free_ports(len(names)), strict=True))
        self.pgbin = Path(self.programs["initdb"]).parent
        self.sockets = self.scratch / "sockets"

    # -- addresses and environment -----------------------------------------------------
    def primary_url(self) -> str:
        """Direct to the primary: migrations and one-off commands."""
        return f"postgres://{APP_USER}:{APP_PASSWORD}@127.0.0.1:{self.ports['primary']}/{DATABASE}"

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
            # nginx appends the client to X-Forwarded-For: the lockout and the throttles
            # count the address it saw, not nginx's own.
            "GROUNDING_TRUSTED_PROXIES": "1",
            # The throttle counters every server shares (as REDIS_URL in production):
            # kept off the database, so a read touches the replica alone.
            "REDIS_URL": f"redis://127.0.0.1:{self.ports['redis']}/0",
            # The event feed's receiver in the smoke listens on loopback, over http.
            "GROUNDING_WEBHOOK_ALLOW_PRIVATE": "1",
            # The checks send a few hundred writes a minute from one demo user.
            "GROUNDING_THROTTLE_RATES": "read=100000/min,write=100000/min,bulk=10000/min",
            # The log's leaves are integrated by the sequencer service (start_sequencer).
            "GROUNDING_LOG_SIGNING_KEY": self.log_key,
            "GROUNDING_LOG_SEQUENCER": "service",
        }

    def direct_env(self, name: str = "manage") -> dict[str, str]:
        """An app environment straight to the primary (no pooler, no replica)."""
        env = {**self.app_env(name), "DATABASE_URL": self.primary_url()}
        for key in ("DATABASE_REPLICA_URL", "DATABASE_POOLER"):
            env.pop(key)
        return env

    def start_sequencer(self) -> Service:
        """`manage.py run_sequencer` on the primary, as docker-compose's `sequencer`."""
        service = self.supervisor.start(
            "sequencer",
            [sys.executable, "manage.py", "run_sequencer", "--interval", "0.2"],
            env=self.direct_env("sequencer"),
            cwd=PROJECT,
        )
        self.services["sequencer"] = service
        return service

    def manage(self, *args: str, env: dict[str, str] | None = None, timeout: float = 180):
        return run(
            [sys.executable, "manage.py", *args],
            env=env or self.app_env(),
            cwd=PROJECT,
            timeout=timeout,
        )
