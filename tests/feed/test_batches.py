"""A lane's batch (docs/events.md "Delivery workers"): its deliveries of different
subjects sent at once, never two of one subject; its outcomes recorded in one INSERT
of attempts and one UPDATE of deliveries, numbered on from the lane's count."""

from __future__ import annotations

import json
import threading
import time

from django.db import connection
from django.test.utils import CaptureQueriesContext

from feed import worker
from feed.models import Delivery, DeliveryAttempt, DeliveryLane
from tests import factories
from tests.feed.conftest import subscribe
from tests.feed.receiver import Answer, Receiver


def _register(world, n: int) -> list:
    return [factories.register_link(world.curator, world.dimension, world.profile,
                                    world.passage) for _ in range(n)]  # fmt: skip


class InFlight:
    """A receiver's script that answers after `delay` seconds and counts the requests
    in flight at once: in all, and per subject."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.lock = threading.Lock()
        self.now: dict[str, int] = {}
        self.most_of_a_subject = 0
        self.most = 0

    def __call__(self, n: int, request) -> Answer:
        subject = json.loads(request.body)["subject"]
        with self.lock:
            self.now[subject] = self.now.get(subject, 0) + 1
            self.most_of_a_subject = max(self.most_of_a_subject, self.now[subject])
            self.most = max(self.most, sum(self.now.values()))
        time.sleep(self.delay)
        with self.lock:
            self.now[subject] -= 1
        return Answer(200)


def test_a_batch_sends_subjects_at_once_but_never_two_events_of_one_subject(world):
    script = InFlight(delay=0.5)
    with Receiver(script) as receiver:
        subscribe(world, receiver.url)
        links = _register(world, 6)
        for link in links:
            factories.assess(world.reviewer, link)
        started = time.monotonic()
        assert worker.deliver_until_idle() == 12
        elapsed = time.monotonic() - started
    assert script.most_of_a_subject == 1
    assert script.most == 5  # the first alone, then the other five subjects at once
    # Two passes of a first answer and five at once: 2 s; one after another, 6 s.
    assert elapsed < 4.5
    sent = [json.loads(r.body) for r in receiver.received]
    for link in links:
        assert [d["sequence"] for d in sent if d["subject"] == str(link.pk)] == [1, 2]
    assert Delivery.objects.filter(state="delivered").count() == 12


def test_the_first_delivery_of_a_batch_goes_alone_and_a_410_stops_the_batch(world):
    script = InFlight(delay=0.1)
    with Receiver(lambda n, r: Answer(410) if n == 0 else script(n, r)) as receiver:
        subscribe(world, receiver.url)
        _register(world, 4)
        assert worker.deliver_until_idle() == 1
    assert len(receiver.received) == 1
    assert script.most == 0


def test_a_batchs_outcomes_are_recorded_in_one_insert_and_one_update(world):
    failing: set[str] = set()

    def script(n: int, request) -> Answer:
        subject = json.loads(request.body)["subject"]
        return Answer(500 if subject in failing else 200)

    with Receiver(script) as receiver:
        webhook = subscribe(world, receiver.url).webhook
        links = _register(world, 5)
        failing.add(str(links[2].pk))
        with CaptureQueriesContext(connection) as queries:
            served = worker.serve_one_lane()
    assert served is not None and served.attempts == 5
    assert served.outcomes == {"delivered": 4, "status": 1}
    statements = [q["sql"] for q in queries.captured_queries]
    inserts = [s for s in statements if s.startswith('INSERT INTO "feed_deliveryattempt"')]
    updates = [s for s in statements if s.startswith('UPDATE "feed_delivery"')]
    assert (len(inserts), len(updates)) == (1, 1)
    # Numbered on from the lane's count, in the batch's order (the log's, here).
    attempts = list(
        DeliveryAttempt.objects.filter(webhook=webhook)
        .order_by("n")
        .values_list("n", "delivery__subject", "outcome", "status_code")
    )
    assert attempts == [
        (i + 1, str(link.pk), "status" if i == 2 else "delivered", 500 if i == 2 else 200)
        for i, link in enumerate(links)
    ]
    states = dict(Delivery.objects.values_list("subject", "state"))
    assert states == {str(link.pk): "pending" if i == 2 else "delivered"
                      for i, link in enumerate(links)}  # fmt: skip
    failed = Delivery.objects.get(subject=str(links[2].pk))
    assert failed.attempts == 1
    assert failed.finished_at is None
    assert DeliveryLane.objects.get(webhook=webhook).attempts == 5
    delivered = Delivery.objects.get(subject=str(links[0].pk))
    assert delivered.finished_at == DeliveryAttempt.objects.get(n=1).attempted_at


def test_a_batch_is_at_most_batch_deliveries_and_the_next_pass_numbers_on(world):
    with Receiver() as receiver:
        webhook = subscribe(world, receiver.url).webhook
        _register(world, 5)
        first = worker.serve_one_lane(batch=3)
        second = worker.serve_one_lane(batch=3)
    assert (first.attempts, second.attempts) == (3, 2)
    numbers = list(DeliveryAttempt.objects.filter(webhook=webhook).order_by("n")
                   .values_list("n", flat=True))  # fmt: skip
    assert numbers == [1, 2, 3, 4, 5]
    assert len({r.headers["webhook-id"] for r in receiver.received}) == 5
