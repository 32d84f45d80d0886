"""The drills of issue 36, in the order tests/ha_drill/run.py runs them. Each prints
its figures and raises SmokeFailure, with the evidence, on the first broken
guarantee."""

from __future__ import annotations

import time

import requests

from tests.ha_drill import record
from tests.ha_drill.cluster import MEMBERS, HaTopology
from tests.ha_drill.load import (
    Load,
    Probe,
    acknowledged,
    answered,
    outage,
    readyz,
    statuses_of,
    wait_for_writes,
)
from tests.prod_smoke.checks import expect
from tests.prod_smoke.procs import SmokeFailure, wait_until
from tests.prod_smoke.web import SERVERS
from tests.soak import invariants, stored
from tests.soak.drills import Links
from tests.soak.invariants import WRITES, Check
from tests.soak.load import Client, Recorder

FAILOVER_LIMIT = 30.0  # seconds from the leader's loss to a new leader
CURATORS = 4
WORKERS = ("sequencer", "deliver-1", "deliver-2")
READS = ("read", "list")

__all__ = ["Drill", "expect"]


class Drill:
    def __init__(self, top: HaTopology) -> None:
        self.top = top
        self.tokens = top.demo["tokens"]
        self.recorder = Recorder()
        self.links = Links()
        self.checks: list[Check] = []
        self.figures: dict[str, str] = {}
        self.changes: list[tuple[str, float]] = []  # leader changes: (label, monotonic)
        self.lost: str | None = None
        self.key = top.manage("log_signing_key", "--public", env=top.direct_env()).stdout.strip()
        self.checkpoints = record.Checkpoints(top.base_url(), self.tokens["curator"], str(top.cert))
        self.pids = {name: top.services[name].process.pid for name in WORKERS}

    def clients(self, count: int = CURATORS) -> list[Client]:
        return [
            Client([self.top.base_url()], self.tokens["curator"], self.recorder, str(self.top.cert))
            for _ in range(count)
        ]

    def record(self, *checks: Check) -> None:
        for check in checks:
            self.checks.append(check)
            print(check.line(), flush=True)
            if not check.ok:
                raise SmokeFailure(f"broken: {check.name}: {check.detail}")

    def figure(self, name: str, value: str) -> None:
        self.figures[name] = value
        print(f"   {name}: {value}", flush=True)

    def writes_hold(self, phase: str) -> None:
        """The soak's write invariants over the phase's ops, on the current leader."""
        ops = self.recorder.of(phase)
        with self.top.connect("primary") as conn:
            held = stored.read(conn)
        committed, settled = invariants.committed_writes_answered_2xx(ops, held)
        self.record(
            invariants.every_write_answered_2xx(ops),
            invariants.nothing_lost(ops, held),
            invariants.all_or_nothing_and_no_duplicates(ops, held),
            committed,
        )
        reads = [op for op in ops if op.kind in READS]
        unserved = [f"{op.kind} {op.grounding_id}: {op.status}" for op in reads
                    if op.status == 0 or op.status >= 500]  # fmt: skip
        self.record(
            invariants._check(
                "every read answered (a 404 is a link not yet on the standby)",
                unserved,
                f"{len(reads)} reads, statuses {statuses_of(ops, READS)}",
            )
        )
        print(f"   writes' attempts by status {statuses_of(ops, WRITES)}; {settled} "
              "settled by their replay", flush=True)  # fmt: skip

    def readiness(self) -> dict[str, tuple[int, dict]]:
        return {name: readyz(self.top.ports[name]) for name in SERVERS}

    def all_ready(self, replica: str) -> bool:
        return all(
            status == 200 and body.get("checks", {}).get("replica") == replica
            for status, body in self.readiness().values()
        )

    # -- the drills --------------------------------------------------------------------
    def ready(self) -> None:
        for name, (status, body) in self.readiness().items():
            print(f"   {name} /readyz: {status} {body}")
        wait_until("every app server ready with its replica", lambda: self.all_ready("ok"),
                   timeout=30)  # fmt: skip
        self.checkpoints.start()

    def replica_lost(self) -> None:
        top = self.top
        victim = next(m for m, state in top.standbys().items() if state == "async")
        with Load(self.clients(), "replica", self.links), Probe(top.ports) as probe:
            wait_for_writes(self.recorder, "replica", 10)
            killed_at = time.monotonic()
            pids = top.kill_member(victim)
            print(f"   SIGKILLed {victim} (the asynchronous standby the reads go to): "
                  f"Patroni and PostgreSQL, pids {pids}", flush=True)  # fmt: skip
            wait_until("every app server ready with its replica degraded",
                       lambda: probe.all_ready("degraded", killed_at), timeout=30)  # fmt: skip
            degraded = time.monotonic()
            wait_for_writes(self.recorder, "replica", 15, after=degraded)
            wait_until("reads answered after", lambda: len(answered(
                [op for op in self.recorder.of("replica") if op.kind in READS], degraded)) >= 10,
                timeout=30)  # fmt: skip
        self.figure("replica lost → every app server degraded", f"{degraded - killed_at:.1f} s")
        after = [status for t, _, status, _ in probe.seen if t > killed_at]
        self.record(
            Check(
                "every app server stayed ready (200) after the replica was lost",
                bool(after) and all(status == 200 for status in after),
                f"/readyz polled {len(after)} times since: {probe.states(killed_at)}",
            )
        )
        self.writes_hold("replica")
        self.lost = victim

    def member_back(self) -> None:
        top, member = self.top, self.lost
        service_log = top.scratch / "logs" / f"patroni-{member}.log"
        offset = service_log.stat().st_size
        started = time.monotonic()
        top.start_member(member)
        leader = top.wait_healthy(timeout=120)
        rejoined = time.monotonic() - started
        lines = service_log.read_text(errors="replace")[offset:].splitlines()
        ran = any("running pg_rewind" in line for line in lines)
        diverged = [line.split("pg_rewind: ", 1)[-1] for line in lines if "diverged" in line]
        self.figure(f"{member} back as a replica of {leader}", f"{rejoined:.1f} s, standbys "
                    f"{top.standbys()}; pg_rewind: "
                    f"{(diverged or ['ran'])[0] if ran else 'not needed'}")  # fmt: skip
        wait_until("every app server reading from its replica again",
                   lambda: self.all_ready("ok"), timeout=30)  # fmt: skip

    def leader_lost(self) -> None:
        top = self.top
        old = top.leader()
        expect(old is not None, "no leader before the drill")
        with Load(self.clients(), "failover", self.links):
            wait_for_writes(self.recorder, "failover", 20)
            killed_at = time.monotonic()
            pids = top.kill_member(old)
            print(f"   SIGKILLed the leader {old}: Patroni and PostgreSQL, pids {pids}",
                  flush=True)  # fmt: skip
            new = wait_until(
                "a new leader",
                lambda: (lambda name: name if name not in (None, old) else None)(
                    top.leader(tuple(m for m in MEMBERS if m != old))
                ),
                timeout=FAILOVER_LIMIT,
                interval=0.1,
            )
            elected = time.monotonic() - killed_at
            first = wait_for_writes(self.recorder, "failover", 1, after=killed_at, timeout=60)
            wait_for_writes(self.recorder, "failover", 20, after=first)
        self.changes.append(("the failover", killed_at))
        ops = self.recorder.of("failover")
        window, last, first_after = outage(ops, killed_at)
        self.figure("failover: leader lost → new leader", f"{new} elected in {elected:.1f} s")
        self.figure("failover window (no write acknowledged)", f"{window:.1f} s (from "
                    f"{last:+.1f} s to {first_after:+.1f} s after the kill)")  # fmt: skip
        expect(elected <= FAILOVER_LIMIT, f"no new leader within {FAILOVER_LIMIT} s")
        self.writes_hold("failover")
        self.carry_on(ops, killed_at)
        self.lost = old

    def carry_on(self, ops, since: float) -> None:
        """The sequencer and the workers, still the same processes, integrate and
        deliver the writes acknowledged after the change."""
        later = {a.request_id for a in acknowledged(ops, since)}

        def done() -> bool:
            with self.top.connect("primary") as conn:
                written = record.read_written(conn, sorted(later))
            leaves = [written.leaf.get(a) for r in later for a in written.by_request.get(r, [])]
            events = {e for a in written.events.values() for e in a}
            ids = record.delivered_ids(self.top.journal)
            self.carried = (len(leaves), len(events))
            return bool(leaves) and None not in leaves and events <= ids

        wait_until("the writes after the change in the log and at the receiver", done,
                   timeout=60, interval=0.5)  # fmt: skip
        same = {n: self.top.services[n].alive() and self.top.services[n].process.pid == pid
                for n, pid in self.pids.items()}  # fmt: skip
        self.record(Check(
            "the sequencer and both workers carried on by themselves (same processes)",
            all(same.values()),
            f"{same}; {self.carried[0]} leaves and {self.carried[1]} events of "
            f"{len(later)} writes after the change integrated and delivered",
        ))  # fmt: skip

    def switchover(self) -> None:
        top = self.top
        leader = top.leader()
        with Load(self.clients(), "switchover", self.links):
            wait_for_writes(self.recorder, "switchover", 20)
            # Right after a member is back Patroni may still be moving the synchronous
            # standby's role: asked again (412) until it has settled.
            candidate = wait_until("a synchronous standby", top.sync_standby, timeout=30)
            asked = time.monotonic()
            answer = requests.post(
                f"{top.rest(leader)}/switchover",
                json={"leader": leader, "candidate": candidate},
                timeout=90,
            )
            if answer.status_code == 412:
                print(f"   switchover to {candidate}: 412 {answer.text.strip()!r}; again")
                candidate = wait_until("a synchronous standby", top.sync_standby, timeout=30)
                asked = time.monotonic()
                answer = requests.post(
                    f"{top.rest(leader)}/switchover",
                    json={"leader": leader, "candidate": candidate},
                    timeout=90,
                )
            replied = time.monotonic() - asked
            expect(answer.status_code == 200, f"switchover: {answer.status_code} {answer.text}")
            wait_until(f"{candidate} leading", lambda: top.leader() == candidate, timeout=30)
            switched = time.monotonic() - asked
            first = wait_for_writes(self.recorder, "switchover", 1, after=asked + switched)
            wait_for_writes(self.recorder, "switchover", 20, after=first)
        self.changes.append(("the switchover", asked))
        ops = self.recorder.of("switchover")
        window, last, first_after = outage(ops, asked)
        self.figure("switchover", f"{leader} → {candidate}: Patroni answered in {replied:.1f} s "
                    f"({answer.text.strip()!r}), leading through HAProxy {switched:.1f} s "
                    "after the request")  # fmt: skip
        self.figure("switchover window (no write acknowledged)", f"{window:.1f} s (from "
                    f"{last:+.1f} s to {first_after:+.1f} s after the request)")  # fmt: skip
        mended = sum(1 for op in ops for a in op.attempts if a.status >= 500 or a.status == 0)
        print(f"   {mended} attempts answered 5xx or not at all; every write's keyed retry "
              "mended it (below)", flush=True)  # fmt: skip
        self.writes_hold("switchover")
        rejoined = top.wait_healthy(timeout=90)
        print(f"   {leader} follows {rejoined} by itself; standbys {top.standbys()}")

    def settled(self) -> None:
        """Every op of every drill: in the log, in the feed, delivered; checkpoints."""
        ops = self.recorder.ops
        later = sorted({a.request_id for a in acknowledged(ops)})

        def integrated() -> record.Written | None:
            with self.top.connect("primary") as conn:
                written = record.read_written(conn, later)
            leaves = [i for r in later for i in
                      (written.leaf[a] for a in written.by_request.get(r, []))]  # fmt: skip
            return written if written.pending == 0 and None not in leaves else None

        written = wait_until("the sequencer integrated every write", integrated, timeout=60,
                             interval=0.5)  # fmt: skip
        ids = set(written.event_keys)
        wait_until("every event at the receiver",
                   lambda: ids <= record.delivered_ids(self.top.journal),
                   timeout=60, interval=0.5)  # fmt: skip
        with self.top.connect("primary") as conn:
            held = stored.read(conn)
        check, figures = record.delivered(written, self.top.journal)
        self.checkpoints.close()
        self.record(
            invariants.nothing_lost(ops, held),
            invariants.all_or_nothing_and_no_duplicates(ops, held),
            invariants.history_equals_revisions(held),
            invariants.one_outcome_per_request(held),
            record.leaves_and_events(ops, written),
            check,
            self.checkpoints.verify(self.key, self.changes),
        )
        self.figures["deliveries"] = str(figures)

    def summary(self) -> None:
        print("== figures (two loaded cores: noisy)")
        for name, value in self.figures.items():
            print(f"   {name}: {value}")
        print(f"== {len(self.checks)} checks held")
