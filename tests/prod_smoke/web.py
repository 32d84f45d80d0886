"""The web tier: Redis for the shared throttle counters, the gunicorn app servers,
and nginx terminating TLS and balancing over them."""

from __future__ import annotations

import shutil
import signal
import sys
import threading
from pathlib import Path

import requests

from tests.prod_smoke.procs import Service, Supervisor, chown_tree, render, run, wait_until

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent.parent
SERVERS = ("web-a", "web-b")


class WebTier:
    """Starts the web tier of a `Topology` (whose ports, supervisor and `app_env`
    it uses)."""

    scratch: Path
    supervisor: Supervisor
    user: str | None
    ports: dict[str, int]
    services: dict[str, Service]
    programs: dict[str, str]
    cert: Path

    def base_url(self) -> str:
        return f"https://localhost:{self.ports['https']}"

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

    # -- app servers -------------------------------------------------------------------
    def start_app_servers(self, workers: int = 2) -> None:
        """Every app server, started side by side (each waits for its /healthz)."""
        errors: list[BaseException] = []

        def start(name: str) -> None:
            try:
                self.start_app_server(name, workers=workers)
            except BaseException as error:  # reported on the main thread
                errors.append(error)

        threads = [threading.Thread(target=start, args=(name,)) for name in SERVERS]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]

    def start_app_server(
        self, name: str, workers: int = 2, env: dict[str, str] | None = None
    ) -> Service:
        gunicorn = Path(sys.executable).with_name("gunicorn")
        service = self.supervisor.start(
            name,
            [
                str(gunicorn),
                "grounding.project.wsgi",
                "--bind",
                f"127.0.0.1:{self.ports[name]}",
                "--workers",
                str(workers),
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
            env=env or self.app_env(name),
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
