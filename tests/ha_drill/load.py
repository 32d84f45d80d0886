"""The drills' traffic and what the clients saw: the soak's curators (keyed
registrations, small bulks, PATCH with If-Match, reads and lists, every write retried
with its key) through nginx over TLS, and a probe of every app server's /readyz."""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field

import requests

from tests.prod_smoke.procs import SmokeFailure, wait_until
from tests.prod_smoke.web import SERVERS
from tests.soak.drills import Curator, Links, Mix, run_load
from tests.soak.invariants import WRITES
from tests.soak.load import Attempt, Client, Op, Recorder

# No reviewers: every link stays with the curator that registered it.
MIX = Mix(register=4, bulk=1, patch=2, read=2, list=1, bulk_items=(2, 4), to_review=0.0)


class Load:
    """`curators` clients on threads while the block runs."""

    def __init__(self, clients: list[Client], phase: str, links: Links) -> None:
        self.phase = phase
        self.stop = threading.Event()
        self.errors: list[BaseException] = []
        actors = [Curator(phase, client, links, MIX) for client in clients]
        self.thread = threading.Thread(
            target=lambda: self.errors.extend(run_load(actors, self.stop)), daemon=True
        )

    def __enter__(self) -> Load:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(timeout=150)
        if self.errors and exc[0] is None:
            raise SmokeFailure(f"a client thread failed: {self.errors[0]!r}")


def acknowledged(ops: list[Op], after: float = 0.0) -> list[Attempt]:
    """The 2xx answers to writes whose attempt was sent after `after` (monotonic)."""
    return sorted(
        (a for op in ops if op.kind in WRITES for a in list(op.attempts)
         if 200 <= a.status < 300 and a.sent_at > after),
        key=lambda a: a.answered_at,
    )  # fmt: skip


def answered(ops: list[Op], after: float = 0.0) -> list[Attempt]:
    """Every 2xx answer (reads too) to an attempt sent after `after`."""
    return [a for op in ops for a in list(op.attempts) if 200 <= a.status < 300 and
            a.sent_at > after]  # fmt: skip


def wait_for_writes(recorder: Recorder, phase: str, count: int, after: float = 0.0,
                    timeout: float = 60) -> float:  # fmt: skip
    """Wait until `count` writes sent after `after` are acknowledged; when the first
    of them was."""
    found = wait_until(
        f"{count} writes acknowledged ({phase})",
        lambda: (lambda acks: acks if len(acks) >= count else None)(
            acknowledged(recorder.of(phase), after)
        ),
        timeout=timeout,
        interval=0.1,
    )
    return found[0].answered_at


def outage(ops: list[Op], at: float) -> tuple[float, float, float]:
    """After the fault at `at` (monotonic): the longest time without an acknowledged
    write, from the last acknowledgement before the fault on; its start and end,
    relative to `at`."""
    acks = [a.answered_at for a in acknowledged(ops)]
    before = [t for t in acks if t <= at]
    if not before or not [t for t in acks if t > at]:
        raise SmokeFailure("no acknowledged write on one side of the fault")
    times = [before[-1], *(t for t in acks if t > at)]
    start, end = max(itertools.pairwise(times), key=lambda pair: pair[1] - pair[0])
    return end - start, start - at, end - at


def statuses_of(ops: list[Op], kinds: tuple[str, ...]) -> dict[int, int]:
    counted: dict[int, int] = {}
    for op in ops:
        if op.kind in kinds:
            for attempt in op.attempts:
                counted[attempt.status] = counted.get(attempt.status, 0) + 1
    return dict(sorted(counted.items()))


def readyz(port: int) -> tuple[int, dict]:
    try:
        answer = requests.get(f"http://127.0.0.1:{port}/readyz", timeout=5)
    except requests.RequestException as error:
        return 0, {"error": type(error).__name__}
    try:
        return answer.status_code, answer.json()
    except ValueError:
        return answer.status_code, {}


@dataclass
class Probe:
    """Every app server's /readyz, polled from a thread while the block runs (one
    probe at a time per server: /readyz answers 503 to a probe that arrives while an
    earlier one's checks still wait)."""

    ports: dict[str, int]
    seen: list[tuple[float, str, int, dict]] = field(default_factory=list)  # t, server, …
    stop: threading.Event = field(default_factory=threading.Event)

    def _poll(self) -> None:
        while not self.stop.wait(0.3):
            for name in SERVERS:
                status, body = readyz(self.ports[name])
                self.seen.append((time.monotonic(), name, status, body))

    def __enter__(self) -> Probe:
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(timeout=15)

    def all_ready(self, replica: str, after: float) -> bool:
        """Every server's last answer since `after`: 200 with the replica `replica`."""
        last = {name: (status, body) for t, name, status, body in list(self.seen) if t > after}
        return set(last) == set(SERVERS) and all(
            status == 200 and body.get("checks", {}).get("replica") == replica
            for status, body in last.values()
        )

    def states(self, after: float = 0.0) -> dict[str, int]:
        counted: dict[str, int] = {}
        for t, _, status, body in self.seen:
            if t > after:
                state = f"{status} {body.get('checks', body)}"
                counted[state] = counted.get(state, 0) + 1
        return counted
