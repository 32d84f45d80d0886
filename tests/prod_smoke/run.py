"""The smoke's order: start the topology, run the checks, stop everything."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import time
import traceback
from pathlib import Path

from tests.prod_smoke import checks, faults, feed, transparency
from tests.prod_smoke.observe import Client, Watch
from tests.prod_smoke.procs import SmokeFailure, Supervisor
from tests.prod_smoke.topology import SERVERS, Topology, ensure_packages

# The whole run, start to teardown; `make prod-smoke` takes about a minute here.
TIME_LIMIT = int(os.environ.get("PROD_SMOKE_TIME_LIMIT", "420"))


class Steps:
    def __init__(self) -> None:
        self.started = time.monotonic()
        self.count = 0

    def __call__(self, title: str) -> None:
        self.count += 1
        print(f"== {self.count}. {title}  [{time.monotonic() - self.started:5.1f}s]", flush=True)


class Run:
    """One run of real programs in a scratch folder (prod-smoke, the soak): a time
    limit, a supervisor of the programs, numbered steps; on any failure the last log
    lines of every program; everything stopped at the end and the folder removed
    unless it failed or `keep_env` is set. The body sets `failed = False` when done."""

    def __init__(self, name: str, *, time_limit: int, keep_env: str) -> None:
        self.name, self.time_limit, self.keep_env = name, time_limit, keep_env
        self.failed = True
        # Set by the body to leave the programs running at the end (HA_KEEP).
        self.keep_running = False

    def _interrupt(self, signum, frame):
        raise SmokeFailure(
            f"time limit of {self.time_limit}s reached"
            if signum == signal.SIGALRM
            else "interrupted"
        )

    def __enter__(self) -> Run:
        signal.signal(signal.SIGALRM, self._interrupt)
        signal.signal(signal.SIGTERM, self._interrupt)
        signal.alarm(self.time_limit)
        self.scratch = Path(tempfile.mkdtemp(prefix=f"grounding-{self.name}-"))
        self.scratch.chmod(0o755)
        (self.scratch / "logs").mkdir()
        self.supervisor = Supervisor(self.scratch / "logs")
        self.step = Steps()
        print(f"{self.name} in {self.scratch} (time limit {self.time_limit}s)", flush=True)
        return self

    def __exit__(self, kind, error, trace) -> bool:
        if error is not None:
            if not isinstance(error, SmokeFailure):
                traceback.print_exception(kind, error, trace)
            print(f"\nFAILED: {error}", flush=True)
            for service in self.supervisor.services:
                print(f"--- last lines of {service.name} ({service.log})\n{service.tail()}")
            self.failed = True
        signal.alarm(0)
        if self.keep_running:
            self.supervisor.detach()
            print(f"== left running; everything is in {self.scratch}", flush=True)
            return isinstance(error, Exception)
        stopping = time.monotonic()
        self.supervisor.stop_all()
        print(f"== stopped everything in {time.monotonic() - stopping:.1f}s", flush=True)
        if self.failed or os.environ.get(self.keep_env):
            print(f"   logs kept in {self.scratch}")
        else:
            shutil.rmtree(self.scratch, ignore_errors=True)
        # An exception is reported above; the caller ends the run by `result()`.
        return isinstance(error, Exception)

    def result(self) -> int:
        total = time.monotonic() - self.step.started
        print(f"{self.name} {'FAILED' if self.failed else 'passed'} in {total:.0f}s", flush=True)
        return 1 if self.failed else 0


def _topology(top: Topology, step: Steps) -> dict:
    step(f"PostgreSQL primary on 127.0.0.1:{top.ports['primary']} (initdb, {top.pgbin})")
    top.start_primary()
    step(f"streaming replica on 127.0.0.1:{top.ports['replica']} (pg_basebackup -R)")
    top.start_replica()
    with top.connect("replica") as conn:
        in_recovery = conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]
    with top.connect("primary") as conn:
        streaming = conn.execute("SELECT state FROM pg_stat_replication").fetchall()
    print(f"   replica in recovery: {in_recovery}; primary's WAL senders: {streaming}")
    checks.expect(in_recovery and streaming == [("streaming",)], "the replica is not streaming")

    step("migrations, once, directly on the primary")
    direct = {**top.app_env(), "DATABASE_URL": top.primary_url()}
    for key in ("DATABASE_REPLICA_URL", "DATABASE_POOLER"):
        direct.pop(key)
    migrated = top.manage("migrate", "--noinput", env=direct)
    # One-off commands write and read back at once: the primary only, no replica.
    seeded = top.manage("seed_demo", "--json", env=direct)
    demo = json.loads(seeded.stdout.strip().splitlines()[-1])
    top.manage("collectstatic", "--noinput", env=direct)
    deploy = top.manage("check", "--deploy", "--fail-level", "WARNING")
    print(f"   seed_demo: dimension {demo['dimension']}, tokens for {sorted(demo['tokens'])}")
    print(f"   check --deploy (the app servers' settings): {deploy.stdout.strip()}")

    step("the transparency log's sequencer (manage.py run_sequencer) on the primary")
    top.start_sequencer()

    step(f"PgBouncer (transaction pooling) on 127.0.0.1:{top.ports['pgbouncer']}")
    top.start_pgbouncer()
    step(f"Redis (shared throttle counters) on 127.0.0.1:{top.ports['redis']}")
    top.start_redis()
    checks.migrations_ran_once(top, migrated.stdout)

    for name in SERVERS:
        step(f"gunicorn {name} on 127.0.0.1:{top.ports[name]} (DJANGO_ENV=production)")
        top.start_app_server(name)
    step(f"nginx: TLS on 127.0.0.1:{top.ports['https']}, plain HTTP on {top.ports['http']}")
    top.start_nginx()
    return demo


def _checks(top: Topology, demo: dict, step: Steps) -> None:
    step("readiness reports the replica")
    checks.readiness(top)
    step("TLS, proxy headers, check --deploy settings in effect")
    curator_token = demo["tokens"]["curator"]
    checks.tls_and_proxy_headers(top, Client(top, curator_token))
    step("request bodies: a PDF upload's own limit; refusals as problem+json")
    checks.body_limits(top, Client(top, curator_token))
    step("balancing over both app servers")
    checks.balancing(top)
    step("static files with hashed names")
    checks.static_files(top)
    watch = Watch(top)
    try:
        curator = Client(top, curator_token, watch)
        step("register: read your write on the primary; reads on the replica")
        link = checks.read_your_writes_and_replica_reads(top, curator)
        step("replication paused: stale reads answered, stale If-Match refused, nothing lost")
        faults.replication_paused(top, curator, link)
    finally:
        watch.close()
    step("one app server killed mid-run")
    faults.app_server_killed(top, curator_token)
    step("the killed server restarted")
    faults.server_back(top)
    step("transparency log: checkpoints under steady load, verified from outside")
    transparency.checkpoints_under_load(top, curator_token)
    step("event feed: a real receiver, deliver_events x2, end to end")
    feed.start_services(top)
    feed.webhooks_end_to_end(top, demo["tokens"])
    step("PgBouncer in transaction mode")
    checks.pooler(top)
    step("the replica's own statistics")
    checks.replica_statistics(top)


def main() -> int:
    with Run("prod-smoke", time_limit=TIME_LIMIT, keep_env="PROD_SMOKE_KEEP") as run:
        run.step("programs (apt-get install what is missing)")
        programs = ensure_packages()
        print("   " + ", ".join(f"{name}={path}" for name, path in sorted(programs.items())))
        top = Topology(run.scratch, run.supervisor, programs)
        demo = _topology(top, run.step)
        _checks(top, demo, run.step)
        run.failed = False
    return run.result()
