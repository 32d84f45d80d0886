"""Deliveries to a real HTTP receiver (API.md "Event feed"): Standard Webhooks
signatures, the retry schedule, 410, Retry-After, timeouts, order per subject."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from standardwebhooks.webhooks import Webhook as Verifier

from feed import worker
from feed.models import Delivery, DeliveryAttempt, Webhook
from tests import factories
from tests.feed.conftest import subscribe
from tests.feed.receiver import Answer, Receiver


def _make_due() -> None:
    """Skip the wait of the retry schedule: every pending delivery is due now."""
    Delivery.objects.filter(state="pending").update(due_at=timezone.now() - timedelta(seconds=1))


def test_three_500s_then_200_carry_one_webhook_id_each_validly_signed(world):
    script = lambda n, r: Answer(500 if n < 3 else 200)  # noqa: E731
    with Receiver(script) as receiver:
        created = subscribe(world, receiver.url)
        link = factories.register_link(world.curator, world.dimension, world.profile,
                                       world.passage)  # fmt: skip
        for _ in range(4):
            worker.deliver_until_idle()
            _make_due()
    assert len(receiver.received) == 4
    ids = {r.headers["webhook-id"] for r in receiver.received}
    assert len(ids) == 1
    verifier = Verifier(created.secret)
    bodies = set()
    for request in receiver.received:
        document = verifier.verify(request.body, request.headers)
        bodies.add(request.body)
        assert document["id"] == ids.pop() if ids else True
        assert document["type"] == "org.grounding.link.registered"
        assert document["subject"] == str(link.pk)
        assert document["source"] == f"urn:grounding:{world.dimension.name}"
        assert document["sequence"] == 1
        assert isinstance(document["logindex"], int)  # its leaf in the Dimension's log
        assert document["specversion"] == "1.0"
        assert request.headers["Content-Type"].startswith("application/cloudevents+json")
    assert len(bodies) == 1  # the same bytes every time
    attempts = list(
        DeliveryAttempt.objects.order_by("n").values_list("n", "outcome", "status_code")
    )
    assert attempts == [(1, "status", 500), (2, "status", 500), (3, "status", 500),
                        (4, "delivered", 200)]  # fmt: skip
    assert Delivery.objects.get().state == "delivered"


def test_a_forged_signature_does_not_verify(world):
    with Receiver() as receiver:
        subscribe(world, receiver.url)
        factories.register_link(world.curator, world.dimension, world.profile, world.passage)
        worker.deliver_until_idle()
    request = receiver.received[0]
    other = Verifier("whsec_" + "A" * 43 + "=")
    with pytest.raises(Exception, match="signature"):
        other.verify(request.body, request.headers)


def test_the_retry_schedule_spaces_the_attempts_and_then_gives_up(world, settings):
    settings.GROUNDING_WEBHOOK_RETRY_SCHEDULE = [5, 300]
    with Receiver(lambda n, r: Answer(503)) as receiver:
        subscribe(world, receiver.url)
        factories.register_link(world.curator, world.dimension, world.profile, world.passage)
        worker.deliver_until_idle()
        delivery = Delivery.objects.get()
        first = DeliveryAttempt.objects.get(n=1)
        assert delivery.state == "pending"
        assert 4 <= (delivery.due_at - first.attempted_at).total_seconds() <= 6
        worker.deliver_until_idle()  # not due yet: nothing sent
        assert len(receiver.received) == 1
        _make_due()
        worker.deliver_until_idle()
        delivery.refresh_from_db()
        assert 299 <= (delivery.due_at - timezone.now()).total_seconds() <= 301
        _make_due()
        worker.deliver_until_idle()
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts, len(receiver.received)) == ("failed", 3, 3)


def test_410_disables_the_subscription(world):
    with Receiver(lambda n, r: Answer(410)) as receiver:
        created = subscribe(world, receiver.url)
        for _ in range(2):
            factories.register_link(world.curator, world.dimension, world.profile,
                                    world.passage)  # fmt: skip
        worker.deliver_until_idle()
    webhook = Webhook.objects.get(pk=created.webhook.pk)
    assert webhook.active is False
    assert "410" in webhook.disabled_reason
    assert len(receiver.received) == 1  # nothing more is sent to a gone endpoint
    assert sorted(Delivery.objects.values_list("state", flat=True)) == ["failed", "pending"]


@pytest.mark.parametrize("status", [429, 502, 504])
def test_retry_after_is_honoured(world, status):
    with Receiver(lambda n, r: Answer(status, {"Retry-After": "120"})) as receiver:
        subscribe(world, receiver.url)
        factories.register_link(world.curator, world.dimension, world.profile, world.passage)
        worker.deliver_until_idle()
    delivery = Delivery.objects.get()
    assert 118 <= (delivery.due_at - timezone.now()).total_seconds() <= 121
    assert len(receiver.received) == 1


def test_a_hanging_receiver_is_cut_at_the_timeout(world, settings):
    settings.GROUNDING_WEBHOOK_TIMEOUT = 1
    with Receiver(lambda n, r: Answer(200, delay=5)) as receiver:
        subscribe(world, receiver.url)
        factories.register_link(world.curator, world.dimension, world.profile, world.passage)
        started = timezone.now()
        worker.deliver_until_idle()
        elapsed = (timezone.now() - started).total_seconds()
    attempt = DeliveryAttempt.objects.get()
    assert attempt.outcome == "timeout"
    assert elapsed < 3
    assert Delivery.objects.get().state == "pending"


def test_events_of_one_subject_are_delivered_in_order(world):
    with Receiver() as receiver:
        subscribe(world, receiver.url)
        link = factories.register_link(world.curator, world.dimension, world.profile,
                                       world.passage)  # fmt: skip
        factories.assess(world.reviewer, link)
        worker.deliver_until_idle()
    sequences = [json.loads(r.body)["sequence"] for r in receiver.received]
    assert sequences == [1, 2]


def test_a_failing_event_holds_back_later_ones_of_its_subject_only(world):
    failing = {}

    def script(n, request):
        subject = json.loads(request.body)["subject"]
        failing.setdefault("subject", subject)
        return Answer(500 if subject == failing["subject"] else 200)

    with Receiver(script) as receiver:
        subscribe(world, receiver.url)
        first = factories.register_link(world.curator, world.dimension, world.profile,
                                        world.passage)  # fmt: skip
        factories.assess(world.reviewer, first)
        second = factories.register_link(world.curator, world.dimension, world.profile,
                                         world.passage)  # fmt: skip
        worker.deliver_until_idle()
    sent = [(json.loads(r.body)["subject"], json.loads(r.body)["sequence"])
            for r in receiver.received]  # fmt: skip
    assert sent == [(str(first.pk), 1), (str(second.pk), 1)]


def test_another_dimensions_subscriber_receives_nothing(world):
    other = factories.make_dimension()
    other_steward = factories.user_with_roles(other, "steward")
    with Receiver() as mine, Receiver() as theirs:
        subscribe(world, mine.url)
        from feed import services

        services.create_webhook(actor=other_steward, dimension=other.name, url=theirs.url)
        factories.register_link(world.curator, world.dimension, world.profile, world.passage)
        worker.deliver_until_idle()
    assert len(mine.received) == 1
    assert theirs.received == []


def test_event_types_filter_what_is_delivered(world):
    with Receiver() as receiver:
        subscribe(world, receiver.url, event_types=["org.grounding.link.assessed"])
        link = factories.register_link(world.curator, world.dimension, world.profile,
                                       world.passage)  # fmt: skip
        factories.assess(world.reviewer, link)
        worker.deliver_until_idle()
    assert [json.loads(r.body)["type"] for r in receiver.received] == [
        "org.grounding.link.assessed"
    ]


def test_redirects_are_not_followed(world):
    with Receiver() as elsewhere:
        redirect = lambda n, r: Answer(307, {"Location": elsewhere.url})  # noqa: E731
        with Receiver(redirect) as receiver:
            subscribe(world, receiver.url)
            factories.register_link(world.curator, world.dimension, world.profile,
                                    world.passage)  # fmt: skip
            worker.deliver_until_idle()
    assert elsewhere.received == []
    attempt = DeliveryAttempt.objects.get()
    assert (attempt.outcome, attempt.status_code) == ("status", 307)
    assert Delivery.objects.get().state == "pending"


def test_the_address_is_checked_again_at_delivery(world, settings):
    """A receiver allowed when subscribed (loopback, by the operator's setting) is
    refused once the rule changes: each delivery resolves and checks the host anew."""
    with Receiver() as receiver:
        subscribe(world, receiver.url.replace("127.0.0.1", "localhost"))
        factories.register_link(world.curator, world.dimension, world.profile, world.passage)
        settings.GROUNDING_WEBHOOK_ALLOW_PRIVATE = False
        worker.deliver_until_idle()
    assert receiver.received == []
    attempt = DeliveryAttempt.objects.get()
    assert attempt.outcome == "refused_address"
    assert attempt.detail == "webhook URLs must be https."  # http to loopback: both refused


def test_a_receiver_answering_garbage_is_a_failed_attempt(world):
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    def garbage() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.recv(65536)
            conn.sendall(b"\x00\xffnot http at all\r\n\r\n")
            conn.close()

    threading.Thread(target=garbage, daemon=True).start()
    try:
        subscribe(world, f"http://127.0.0.1:{listener.getsockname()[1]}/hook")
        factories.register_link(world.curator, world.dimension, world.profile, world.passage)
        worker.deliver_until_idle()
    finally:
        listener.close()
    attempt = DeliveryAttempt.objects.get()
    assert attempt.outcome == "connection"
    assert Delivery.objects.get().state == "pending"  # retried on the schedule
