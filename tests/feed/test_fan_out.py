"""Who writes the deliveries (API.md "Event feed", docs/events.md "The outbox"): with
the transparency log on, a write stores its events only and the delivery workers
write each subscription's deliveries from its place in the log, in log order; with
the log off, the outbox writes them with the events."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from feed import log_link, services, worker
from feed.models import Delivery, DeliveryLane, Event
from grounding import services as grounding
from tests import factories
from tests.feed.conftest import subscribe

NOWHERE = "http://127.0.0.1:9/never"


def _register(world, n: int = 1) -> list:
    return [factories.register_link(world.curator, world.dimension, world.profile,
                                    world.passage) for _ in range(n)]  # fmt: skip


def _fan_out(webhook) -> int:
    """One worker pass's fan-out for this subscription, after the sequencer ran."""
    log_link.integrate()
    with transaction.atomic():
        lane = DeliveryLane.objects.select_for_update().get(webhook=webhook)
        owed = worker.fan_out(lane, webhook, timezone.now())
        lane.save(update_fields=["logindex"])
    return owed


def _withdraw(world, link) -> None:
    grounding.withdraw(
        actor=world.access_steward,
        grounding_id=link.pk,
        expected_revision=1,
        withdrawal={"reason": "wrong", "authority_ref": "urn:policy:w"},
    )


def _owed(webhook) -> list[tuple[str, int]]:
    return list(
        Delivery.objects.filter(webhook=webhook).order_by("id").values_list("subject", "sequence")
    )


def test_a_write_stores_its_events_and_the_worker_writes_their_deliveries_in_log_order(world):
    webhook = subscribe(world, NOWHERE).webhook
    links = _register(world, 3)
    assert Event.objects.count() == 3
    assert Delivery.objects.count() == 0  # nothing on the write path
    assert _fan_out(webhook) == 3
    assert _owed(webhook) == [(str(link.pk), 1) for link in links]
    lane = DeliveryLane.objects.get(webhook=webhook)
    assert lane.logindex == log_link.last_index(world.dimension.pk)
    assert _fan_out(webhook) == 0  # its place moved past them: owed once


def test_a_subscription_is_owed_the_events_after_it_and_the_types_it_wants(world):
    before = _register(world)[0]
    log_link.integrate()
    webhook = subscribe(world, NOWHERE, event_types=["org.grounding.link.withdrawn"]).webhook
    link = _register(world)[0]
    _withdraw(world, link)
    _fan_out(webhook)
    assert _owed(webhook) == [(str(link.pk), 2)]  # not `before`, not the registration
    assert not Delivery.objects.filter(subject=str(before.pk)).exists()


def test_a_subscription_turned_off_keeps_its_place_and_is_owed_what_was_written(world):
    created = subscribe(world, NOWHERE)
    services.change_webhook(actor=world.steward, webhook_id=created.webhook.pk, active=False)
    links = _register(world, 2)
    log_link.integrate()
    assert worker.claim_lane(timezone.now()) is None  # off: no worker serves it
    services.change_webhook(actor=world.steward, webhook_id=created.webhook.pk, active=True)
    with transaction.atomic():
        assert worker.claim_lane(timezone.now()).pk == created.webhook.pk  # behind its log
    _fan_out(created.webhook)
    assert _owed(created.webhook) == [(str(link.pk), 1) for link in links]


def test_with_the_log_off_the_outbox_writes_the_deliveries_with_the_events(world, settings):
    settings.GROUNDING_LOG_ENABLED = False
    webhook = subscribe(world, NOWHERE).webhook
    links = _register(world, 2)
    assert _owed(webhook) == [(str(link.pk), 1) for link in links]
    with transaction.atomic():
        lane = DeliveryLane.objects.get(webhook=webhook)
        assert worker.claim_lane(timezone.now()).pk == lane.pk  # due: the outbox's rows
