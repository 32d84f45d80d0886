"""Delivery workers as processes (PostgreSQL, real receivers): a worker killed while
it delivers loses nothing, and several workers deliver each event once at a time."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time

import pytest

from feed.models import Delivery, DeliveryAttempt
from tests import factories
from tests.conftest import requires_postgres
from tests.feed.conftest import subscribe
from tests.feed.receiver import Answer, Receiver
from tests.ops.live import PROJECT, database_url, server_env

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]


def _worker(*args: str) -> subprocess.Popen:
    env = server_env(
        database_url(),
        GROUNDING_WEBHOOK_ALLOW_PRIVATE="1",
        GROUNDING_WEBHOOK_TIMEOUT="30",
        GROUNDING_WEBHOOK_RETRY_SCHEDULE="1,1,1",
    )
    return subprocess.Popen(
        [sys.executable, "manage.py", "deliver_events", "--poll", "0.1", *args],
        cwd=PROJECT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _ready(process: subprocess.Popen, seconds: float = 60) -> None:
    """Wait until the worker says it serves (its signal handlers are in place: a SIGTERM
    before then would end it as any process, not after its batches)."""
    deadline = time.monotonic() + seconds
    seen = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.5)
        if not ready:
            continue
        line = process.stdout.readline().decode(errors="replace")
        assert line, f"the worker ended before serving: {seen}"
        seen.append(line)
        if line.startswith("delivering with"):
            return
    raise AssertionError(f"the worker did not start serving: {seen}")


def _wait(condition, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_killed_workers_claimed_events_are_delivered_by_another(world):
    # The first receiver never answers: the first worker hangs mid-delivery, holding
    # the lane; it is SIGKILLed there.
    with Receiver(lambda n, r: Answer(200, delay=0 if n > 0 else 60)) as receiver:
        subscribe(world, receiver.url)
        link = factories.register_link(world.curator, world.dimension, world.profile,
                                       world.passage)  # fmt: skip
        first = _worker("--threads", "1")
        try:
            _wait(lambda: len(receiver.received) == 1)
        finally:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(timeout=10)
        # Nothing recorded, nothing lost: its transaction rolled back, with the delivery
        # it wrote (feed.worker.fan_out) and its lane's place in the log.
        assert not Delivery.objects.exclude(state="pending").exists()
        assert not DeliveryAttempt.objects.exists()
        second = _worker("--threads", "2")
        try:
            _wait(lambda: Delivery.objects.filter(state="delivered").count() == 1)
        finally:
            os.killpg(second.pid, signal.SIGTERM)
            second.wait(timeout=15)
    assert len(receiver.received) == 2
    ids = {r.headers["webhook-id"] for r in receiver.received}
    assert len(ids) == 1  # the same event, so the receiver can drop the duplicate
    assert json.loads(receiver.received[1].body)["subject"] == str(link.pk)


def test_several_workers_deliver_every_event_in_order_per_subject(world):
    with Receiver() as receiver:
        subscribe(world, receiver.url)
        links = [
            factories.register_link(world.curator, world.dimension, world.profile, world.passage)
            for _ in range(5)
        ]
        for link in links:
            factories.assess(world.reviewer, link)
        workers = [_worker("--threads", "2") for _ in range(3)]
        try:
            for process in workers:
                _ready(process)
            _wait(lambda: Delivery.objects.filter(state="delivered").count() == 10)
        finally:
            for process in workers:
                os.killpg(process.pid, signal.SIGTERM)
            for process in workers:
                assert process.wait(timeout=15) == 0
    sent = [json.loads(r.body) for r in receiver.received]
    assert len(sent) == 10
    for link in links:
        assert [d["sequence"] for d in sent if d["subject"] == str(link.pk)] == [1, 2]


def test_a_hanging_receiver_does_not_hold_back_another_subscription(world):
    with Receiver(lambda n, r: Answer(200, delay=20)) as hanging, Receiver() as healthy:
        subscribe(world, hanging.url)
        subscribe(world, healthy.url)
        for _ in range(3):
            factories.register_link(world.curator, world.dimension, world.profile,
                                    world.passage)  # fmt: skip
        process = _worker("--threads", "2")
        started = time.monotonic()
        try:
            _wait(lambda: len(healthy.received) == 3, seconds=15)
            elapsed = time.monotonic() - started
            assert len(hanging.received) == 1  # still waiting on its first answer
        finally:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    assert elapsed < 15
