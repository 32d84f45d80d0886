"""GET /metrics (Prometheus text): not public unless the operator says so; request
latency by route, outbox lag, deliveries by outcome, links pending review."""

from __future__ import annotations

from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from feed import log_link, worker
from tests import factories
from tests.api.helpers import problem
from tests.feed.conftest import subscribe
from tests.feed.receiver import Answer, Receiver


def _samples(response) -> dict[tuple[str, tuple], float]:
    found = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_metrics_are_refused_to_anyone_but_operators_and_the_scraper(world, settings):
    settings.GROUNDING_METRICS_TOKEN = "scrape-me"
    problem(Client().get("/metrics"), 401, "not_authenticated")
    steward = Client()
    steward.force_login(world.steward)
    problem(steward.get("/metrics"), 403, "operator_required")
    problem(Client().get("/metrics", HTTP_AUTHORIZATION="Bearer wrong"), 401,
            "not_authenticated")  # fmt: skip
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me").status_code == 200
    operator = Client()
    operator.force_login(factories.UserFactory(is_superuser=True, is_staff=True))
    assert operator.get("/metrics").status_code == 200
    settings.GROUNDING_METRICS_PUBLIC = True
    assert Client().get("/metrics").status_code == 200


def test_metrics_report_the_feed_and_the_registry(world, settings):
    settings.GROUNDING_METRICS_PUBLIC = True
    with Receiver(lambda n, r: Answer(500 if n == 0 else 200)) as receiver:
        subscribe(world, receiver.url)
        link = factories.register_link(world.curator, world.dimension, world.profile,
                                       world.passage)  # fmt: skip
        log_link.integrate()
        # Owed, though no worker wrote its delivery yet (feed.worker.fan_out).
        lagging = _samples(Client().get("/metrics"))
        worker.deliver_until_idle()
    assert lagging[("grounding_outbox_lag_seconds", ())] > 0
    Client().get(f"/api/v1/groundings/{link.pk}/")  # 401, timed under its route
    found = _samples(Client().get("/metrics"))
    assert found[("grounding_webhook_deliveries_total", (("outcome", "status"),))] == 1
    assert found[("grounding_webhook_deliveries_total", (("outcome", "delivered"),))] == 0
    assert found[("grounding_webhook_deliveries_by_state", (("state", "pending"),))] == 1
    assert found[("grounding_links_pending_review", ())] == 0
    routes = {dict(labels).get("route") for (name, labels) in found
              if name == "grounding_http_request_duration_seconds_count"}  # fmt: skip
    assert {"api/v1/groundings/<uuid:grounding_id>/", "metrics"} <= routes
    assert receiver.received
