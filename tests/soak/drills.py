"""The drills' traffic: the mixed soak, the load the kill drills run under, the race
and the throttle drill. Each records its ops in a `Recorder`; the checks are run on
them afterwards (tests/soak/run.py)."""

from __future__ import annotations

import queue
import random
import threading
import time
from dataclasses import dataclass, field

from tests.soak.load import (
    Client,
    Op,
    Recorder,
    assessment_payload,
    bulk_payload,
    link_payload,
    new_key,
    patch_payload,
)

GROUNDINGS = "/api/v1/groundings/"
ORDERINGS = ("-grounding_id", "-revision", "-observed_at", "revision")


@dataclass
class Links:
    """Links handed between threads; each link is changed by one thread at a time (its
    owner), so a 412 in the soak is always a lost or doubled write, never a race."""

    known: list[str] = field(default_factory=list)  # every link registered, for reads
    to_review: queue.Queue = field(default_factory=queue.Queue)  # (id, revision)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, ids: list[str]) -> None:
        with self.lock:
            self.known.extend(ids)

    def any(self) -> str | None:
        with self.lock:
            return random.choice(self.known) if self.known else None


@dataclass
class Mix:
    """Weights of a curator's actions, and the size of its bulks."""

    register: int = 3
    bulk: int = 1
    patch: int = 3
    read: int = 2
    list: int = 1
    bulk_items: tuple[int, int] = (2, 5)
    to_review: float = 0.3  # share of new links handed to a reviewer

    def pick(self) -> str:
        names = ["register", "bulk", "patch", "read", "list"]
        return random.choices(names, weights=[getattr(self, n) for n in names])[0]


class Curator:
    def __init__(self, phase: str, client: Client, links: Links, mix: Mix) -> None:
        self.phase, self.client, self.links, self.mix = phase, client, links, mix
        self.own: dict[str, int] = {}  # link → revision last answered

    def step(self) -> None:
        action = self.mix.pick()
        if action == "patch" and not self.own:
            action = "register"
        if action in ("read", "list") and not self.links.known:
            action = "register"
        getattr(self, action)()

    def _create(self, kind: str, count: int) -> None:
        key = new_key(self.phase)
        owner = f"role:soak-{key}"
        op = Op(self.phase, kind, key, owner_ref=owner, items=count)
        if kind == "bulk":
            self.client.send(op, "POST", GROUNDINGS + "bulk/", json=bulk_payload(owner, count))
        else:
            self.client.send(op, "POST", GROUNDINGS, json=link_payload(owner))
        if not op.ok:
            return
        self.links.add(op.ids)
        for grounding_id in op.ids:
            if random.random() < self.mix.to_review:
                self.links.to_review.put((grounding_id, 1))
            else:
                self.own[grounding_id] = 1

    def register(self) -> None:
        self._create("register", 1)

    def bulk(self) -> None:
        self._create("bulk", random.randint(*self.mix.bulk_items))

    def patch(self) -> None:
        grounding_id = random.choice(list(self.own))
        revision = self.own[grounding_id]
        op = Op(
            self.phase,
            "patch",
            new_key(self.phase),
            grounding_id=grounding_id,
            expected_revision=revision,
        )
        self.client.send(
            op,
            "PATCH",
            f"{GROUNDINGS}{grounding_id}/",
            json=patch_payload(revision + 1),
            headers={"If-Match": f'"{revision}"'},
        )
        if op.ok:
            self.own[grounding_id] = op.revision

    def read(self) -> None:
        grounding_id = self.links.any()
        op = Op(self.phase, "read", None, grounding_id=grounding_id)
        self.client.send(op, "GET", f"{GROUNDINGS}{grounding_id}/")

    def list(self) -> None:
        ordering = random.choice(ORDERINGS)
        op = Op(self.phase, "list", None)
        self.client.send(op, "GET", f"{GROUNDINGS}?dimension=demo&page_size=20&ordering={ordering}")


class Reviewer:
    def __init__(self, phase: str, client: Client, links: Links) -> None:
        self.phase, self.client, self.links = phase, client, links
        self.own: dict[str, int] = {}

    def step(self) -> None:
        try:
            while True:
                grounding_id, revision = self.links.to_review.get_nowait()
                self.own[grounding_id] = revision
        except queue.Empty:
            pass
        if not self.own:
            time.sleep(0.05)
            return
        grounding_id = random.choice(list(self.own))
        revision = self.own[grounding_id]
        op = Op(
            self.phase,
            "assess",
            new_key(self.phase),
            grounding_id=grounding_id,
            expected_revision=revision,
        )
        self.client.send(
            op,
            "POST",
            f"{GROUNDINGS}{grounding_id}/assessments/",
            json=assessment_payload(revision),
            headers={"If-Match": f'"{revision}"'},
        )
        if op.ok:
            self.own[grounding_id] = op.revision


def run_load(actors: list, stop: threading.Event) -> list[BaseException]:
    """Each actor steps on its own thread until `stop`; the errors they raised."""
    errors: list[BaseException] = []

    def loop(actor) -> None:
        try:
            while not stop.is_set():
                actor.step()
        except BaseException as error:  # reported by the caller
            errors.append(error)

    threads = [threading.Thread(target=loop, args=(actor,), daemon=True) for actor in actors]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    if any(thread.is_alive() for thread in threads):
        errors.append(RuntimeError("a client thread did not stop within 120 s"))
    return errors


def race(urls: list[str], token: str, recorder: Recorder, grounding_id: str, revision: int, n: int):
    """`n` writers PATCH one link with the same If-Match at the same moment (no key,
    no retry). Their statuses."""
    barrier = threading.Barrier(n)
    clients = [Client(urls, token, recorder) for _ in range(n)]
    ops = [Op("race", "race", None, grounding_id=grounding_id) for _ in range(n)]

    def write(index: int) -> None:
        barrier.wait(timeout=30)
        clients[index].send(
            ops[index],
            "PATCH",
            f"{GROUNDINGS}{grounding_id}/",
            json=patch_payload(revision + 1),
            headers={"If-Match": f'"{revision}"'},
            retry=False,
        )

    threads = [threading.Thread(target=write, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return [op.status for op in ops]


def throttle_burst(urls: list[str], token: str, recorder: Recorder, threads: int, each: int):
    """`threads` clients over both servers, `each` registrations apiece, as one caller;
    no retries. (first sent, last answered) in Unix seconds."""
    clients = [Client(urls, token, recorder) for _ in range(threads)]
    barrier = threading.Barrier(threads)
    started = time.time()

    def burst(client: Client) -> None:
        barrier.wait(timeout=30)
        for _ in range(each):
            key = new_key("throttle")
            owner = f"role:soak-{key}"
            op = Op("throttle", "throttle", None, owner_ref=owner, items=1)
            client.send(op, "POST", GROUNDINGS, json=link_payload(owner), retry=False)

    workers = [threading.Thread(target=burst, args=(c,)) for c in clients]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    return started, time.time()
