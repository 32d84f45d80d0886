"""The soak's order: start the topology, run the drills, check the invariants after
each, stop everything. Exits 1 on any broken invariant."""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections import Counter

from tests.prod_smoke.databases import DATABASE
from tests.prod_smoke.procs import SmokeFailure
from tests.prod_smoke.run import Run, Steps
from tests.prod_smoke.topology import ensure_packages
from tests.soak import invariants, stored
from tests.soak.drills import Curator, Links, Mix, Reviewer, race, run_load, throttle_burst
from tests.soak.invariants import Check
from tests.soak.kills import Killer, in_commit, slow_commits
from tests.soak.load import Client, Op, Recorder, link_payload, new_key, statuses
from tests.soak.topology import SERVERS, SoakTopology

TIME_LIMIT = int(os.environ.get("SOAK_TIME_LIMIT", "420"))
SOAK_SECONDS = float(os.environ.get("SOAK_SECONDS", "45"))
KILL_SECONDS = (12.0, 40.0)  # at least, at most
KILLS_PER_KIND = 3
WORKER_SECONDS = 8.0
RACE_WRITERS = 32
THROTTLE_LIMIT, THROTTLE_PERIOD = 20, 3600
THROTTLE_THREADS, THROTTLE_EACH = 12, 5
THROTTLE_USER = "soak-throttle"


class Soak:
    def __init__(self, top: SoakTopology, tokens: dict[str, str]) -> None:
        self.top = top
        self.tokens = tokens
        self.urls = [top.url(name) for name in SERVERS]
        self.recorder = Recorder()
        self.links = Links()
        self.checks: list[Check] = []
        self.worker_kills: list[bool] = []  # per kill: during a COMMIT

    def client(self, role: str) -> Client:
        return Client(self.urls, self.tokens[role], self.recorder)

    def actors(self, phase: str, curators: int, reviewers: int, mix: Mix) -> list:
        links = self.links
        curating = [Curator(phase, self.client("curator"), links, mix) for _ in range(curators)]
        reviewing = [Reviewer(phase, self.client("reviewer"), links) for _ in range(reviewers)]
        return curating + reviewing

    def load(self, actors: list, seconds: float, during=None) -> None:
        stop = threading.Event()
        timer = threading.Timer(seconds, stop.set)
        timer.start()
        errors: list[BaseException] = []
        runner = threading.Thread(target=lambda: errors.extend(run_load(actors, stop)))
        runner.start()
        try:
            if during is not None:
                during(stop)
            else:
                stop.wait(seconds)
        finally:
            stop.set()
            timer.cancel()
            runner.join()
        if errors:
            raise errors[0]

    # -- the checks --------------------------------------------------------------------
    def record(self, *checks: Check) -> None:
        for check in checks:
            self.checks.append(check)
            print(check.line(), flush=True)

    def figures(self, phase: str, elapsed: float) -> list[Op]:
        ops = self.recorder.of(phase)
        attempts = sum(len(op.attempts) for op in ops)
        kinds = Counter(op.kind for op in ops)
        retried = sum(len(op.attempts) > 1 for op in ops)
        replays = sum(1 for op in ops for a in op.attempts if a.replayed)
        servers = Counter(a.server or "-" for op in ops for a in op.attempts)
        links = sum(len(op.ids) for op in ops if op.kind in invariants.CREATES and op.ok)
        print(
            f"   {attempts} requests ({attempts / elapsed:.0f}/s) for {len(ops)} ops "
            f"{dict(sorted(kinds.items()))} in {elapsed:.0f}s; statuses {statuses(ops)}; "
            f"{retried} ops retried, {replays} replays; {links} links registered; "
            f"answered by {dict(sorted(servers.items()))}",
            flush=True,
        )
        return ops

    def check_writes(self, ops: list[Op], *, faults: bool) -> int:
        """The write invariants; the count of writes settled by a replay."""
        with self.top.connect("primary") as conn:
            held = stored.read(conn)
        committed, settled = invariants.committed_writes_answered_2xx(ops, held)
        self.record(
            invariants.every_write_answered_2xx(ops),
            invariants.nothing_lost(ops, held),
            invariants.all_or_nothing_and_no_duplicates(ops, held),
            committed,
        )
        if not faults:
            self.record(invariants.no_5xx(ops))
        return settled

    # -- the drills --------------------------------------------------------------------
    def mixed(self) -> None:
        started = time.monotonic()
        self.load(self.actors("mixed", 4, 2, Mix()), SOAK_SECONDS)
        ops = self.figures("mixed", time.monotonic() - started)
        self.check_writes(ops, faults=False)

    def kill(self) -> None:
        with self.top.connect("primary") as admin:
            slow_commits(admin, on=True)
        killer_conn = self.top.connect("primary")
        killer = Killer(killer_conn, DATABASE, list(SERVERS))
        # Bulks above the COPY threshold (common/kernel/bulk.py COPY_MIN_ROWS = 16).
        mix = Mix(register=2, bulk=2, patch=2, read=1, list=0, bulk_items=(20, 40))

        def during(stop: threading.Event) -> None:
            thread = threading.Thread(target=killer.run)
            thread.start()
            began = time.monotonic()
            while not stop.is_set():
                enough = min(killer.counts().values()) >= KILLS_PER_KIND
                if enough and time.monotonic() - began >= KILL_SECONDS[0]:
                    break
                stop.wait(0.2)
            killer.stop.set()
            thread.join()

        started = time.monotonic()
        try:
            self.load(self.actors("kill", 4, 1, mix), KILL_SECONDS[1], during)
        finally:
            killer_conn.close()
            with self.top.connect("primary") as admin:
                slow_commits(admin, on=False)
        print(
            f"   pg_terminate_backend: {killer.counts()} (tries without a match "
            f"{dict(killer.misses)}); e.g. {sorted({q for _, q in killer.kills})[:4]}",
            flush=True,
        )
        ops = self.figures("kill", time.monotonic() - started)
        self.record(
            Check(
                f"backends terminated during INSERT, COPY and COMMIT (≥ {KILLS_PER_KIND} each)",
                min(killer.counts().values()) >= KILLS_PER_KIND,
                str(killer.counts()),
            )
        )
        self.check_writes(ops, faults=True)

    def worker_kill(self) -> None:
        """Each server's worker SIGKILLed while its backend runs a COMMIT (found by the
        backend's client_port): the commit completes, its answer is lost, the client's
        retry must get the replay."""
        mix = Mix(register=3, bulk=1, patch=3, read=1, list=0)
        killed: list[str] = []
        watcher = self.top.connect("primary")

        def during(stop: threading.Event) -> None:
            for server in [*SERVERS, *SERVERS]:
                stop.wait(WORKER_SECONDS / 5)
                port = in_commit(watcher, DATABASE, server, timeout=3)
                target = self.top.worker_of(server, port) if port else None
                began = time.monotonic()
                victim, _ = self.top.kill_worker(server, target)
                killed.append(
                    f"{server} worker {victim} SIGKILLed "
                    f"{'during its COMMIT' if target else '(no COMMIT seen)'}, replaced in "
                    f"{time.monotonic() - began:.1f}s"
                )
                self.worker_kills.append(target is not None)
            stop.wait(WORKER_SECONDS / 5)

        with self.top.connect("primary") as admin:
            slow_commits(admin, on=True)
        started = time.monotonic()
        try:
            self.load(self.actors("worker", 4, 1, mix), WORKER_SECONDS * 3, during)
        finally:
            watcher.close()
            with self.top.connect("primary") as admin:
                slow_commits(admin, on=False)
        print("   " + "; ".join(killed), flush=True)
        ops = self.figures("worker", time.monotonic() - started)
        settled = self.check_writes(ops, faults=True)
        self.record(
            Check(
                "a worker killed during a COMMIT: the lost answer replayed on retry",
                settled >= 1,
                f"{sum(self.worker_kills)} of {len(self.worker_kills)} kills during a COMMIT; "
                f"{settled} committed writes answered only by their replay",
            )
        )

    def race(self) -> None:
        key = new_key("race")
        owner = f"role:soak-{key}"
        op = Op("race", "register", key, owner_ref=owner, items=1)
        self.client("curator").send(op, "POST", "/api/v1/groundings/", json=link_payload(owner))
        if not op.ok:
            raise SmokeFailure(f"the race's link was not registered: {op.status}")
        grounding_id = op.ids[0]
        with self.top.connect("primary") as conn:
            before = stored.link_state(conn, grounding_id)
        answered = race(
            self.urls, self.tokens["curator"], self.recorder, grounding_id, 1, RACE_WRITERS
        )
        with self.top.connect("primary") as conn:
            after = stored.link_state(conn, grounding_id)
        self.record(invariants.race(answered, before, after, RACE_WRITERS))

    def throttle(self, token: str) -> None:
        rates = f"read=1000000/min,write={THROTTLE_LIMIT}/{THROTTLE_PERIOD}s,bulk=1000000/min"
        began = time.monotonic()
        self.top.restart_servers(rates)
        print(
            f"   both servers restarted with GROUNDING_THROTTLE_RATES={rates} in "
            f"{time.monotonic() - began:.1f}s",
            flush=True,
        )
        first, last = throttle_burst(
            self.urls, token, self.recorder, THROTTLE_THREADS, THROTTLE_EACH
        )
        ops = self.recorder.of("throttle")
        answered = Counter(op.status for op in ops)
        windows = math.floor(last / THROTTLE_PERIOD) - math.floor(first / THROTTLE_PERIOD) + 1
        with self.top.connect("primary") as conn:
            held = stored.read(conn)
        owners = {op.owner_ref for op in ops}
        written = sum(1 for owner, _ in held.links.values() if owner in owners)
        accepted = answered.get(201, 0)
        by_server = Counter(op.final.server for op in ops if op.final and op.ok)
        print(
            f"   {len(ops)} registrations by one caller from {THROTTLE_THREADS} threads over "
            f"both servers in {last - first:.1f}s: statuses {dict(sorted(answered.items()))}; "
            f"accepted by {dict(sorted(by_server.items()))}; {written} links written",
            flush=True,
        )
        other = len(ops) - accepted - answered.get(429, 0)
        self.record(
            invariants.throttled(accepted, answered.get(429, 0), THROTTLE_LIMIT, windows, other),
            Check(
                "a throttled write writes nothing",
                written == accepted,
                f"{written} links written for {accepted} accepted",
            ),
        )

    def everything(self) -> None:
        with self.top.connect("primary") as conn:
            held = stored.read(conn)
        self.record(
            invariants.history_equals_revisions(held),
            invariants.one_outcome_per_request(held),
            invariants.nothing_lost(self.recorder.ops, held),
        )


def _topology(top: SoakTopology, step: Steps) -> dict[str, str]:
    step(f"PostgreSQL on 127.0.0.1:{top.ports['primary']} (initdb, {top.pgbin})")
    top.start_primary()
    step("migrations, the demo, a second curator for the throttle drill")
    top.manage("migrate", "--noinput")
    demo = json.loads(top.manage("seed_demo", "--json").stdout.strip().splitlines()[-1])
    top.manage("grant_role", THROTTLE_USER, "curator", "--dimension", "demo", "--create-user")
    tokens = dict(demo["tokens"])
    tokens[THROTTLE_USER] = top.manage("issue_token", THROTTLE_USER, "--quiet").stdout.strip()
    step(f"gunicorn {', '.join(SERVERS)} (2 workers × 4 threads each, DJANGO_ENV=production)")
    top.start_servers()
    return tokens


def main() -> int:
    soak = None
    with Run("soak", time_limit=TIME_LIMIT, keep_env="SOAK_KEEP") as run:
        step = run.step
        step("programs (apt-get install what is missing)")
        top = SoakTopology(run.scratch, run.supervisor, ensure_packages(("initdb",)))
        tokens = _topology(top, step)
        soak = Soak(top, tokens)
        step(f"mixed soak: {SOAK_SECONDS:.0f}s, 4 curators and 2 reviewers, keyed writes")
        soak.mixed()
        step("kill drill: backends terminated during INSERT, COPY and COMMIT")
        soak.kill()
        step("worker kill: a gunicorn worker of each server SIGKILLed during a COMMIT, twice")
        soak.worker_kill()
        step(f"race: {RACE_WRITERS} writers PATCH one link with the same If-Match")
        soak.race()
        step("every link, every request id")
        soak.everything()
        step(f"throttle: write={THROTTLE_LIMIT}/{THROTTLE_PERIOD}s across both servers")
        soak.throttle(tokens[THROTTLE_USER])
        run.failed = any(not check.ok for check in soak.checks)
    if soak is not None:
        broken = [check for check in soak.checks if not check.ok]
        print(f"== invariants: {len(soak.checks) - len(broken)} held, {len(broken)} broken")
        for check in broken:
            print(check.line())
    return run.result()
