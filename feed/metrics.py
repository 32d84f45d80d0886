"""What /metrics reports (Prometheus, prometheus-client): request latency by route
(observed in this process; summed over processes when PROMETHEUS_MULTIPROC_DIR is
set), and, read from the database at each scrape so every server reports the same,
the outbox lag, deliveries by outcome, checkpoint age and links pending review."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count, Min
from django.utils import timezone
from prometheus_client import Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from feed import log_link
from feed.choices import AttemptOutcome, DeliveryState
from feed.models import Delivery, DeliveryAttempt, DeliveryLane

REQUEST_SECONDS = Histogram(
    "grounding_http_request_duration_seconds",
    "Time to answer a request, by route pattern, method and status class.",
    ["route", "method", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)


class RegistryCollector(Collector):
    """Gauges and counters from the database, computed at scrape time."""

    def collect(self) -> Iterator:
        from grounding.models import GroundingLink

        now = timezone.now()
        oldest = _oldest_owed()
        lag = GaugeMetricFamily(
            "grounding_outbox_lag_seconds",
            "Age of the oldest event still owed to a webhook (0: none is).",
        )
        lag.add_metric([], (now - oldest).total_seconds() if oldest else 0.0)
        yield lag

        outcomes = CounterMetricFamily(
            "grounding_webhook_deliveries",
            "Delivery attempts by outcome.",
            labels=["outcome"],
        )
        counted = dict(
            DeliveryAttempt.objects.values_list("outcome").annotate(n=Count("id")).order_by()
        )
        for outcome in AttemptOutcome.values:
            outcomes.add_metric([outcome], float(counted.get(outcome, 0)))
        yield outcomes

        states = GaugeMetricFamily(
            "grounding_webhook_deliveries_by_state", "Deliveries by state.", labels=["state"]
        )
        by_state = dict(Delivery.objects.values_list("state").annotate(n=Count("id")).order_by())
        for state in DeliveryState.values:
            states.add_metric([state], float(by_state.get(state, 0)))
        yield states

        pending = GaugeMetricFamily(
            "grounding_links_pending_review", "Links whose recheck_state is pending_review."
        )
        pending.add_metric(
            [], float(GroundingLink.objects.filter(recheck_state="pending_review").count())
        )
        yield pending

        age = log_link.checkpoint_age_seconds(now)
        if age is not None:
            checkpoint = GaugeMetricFamily(
                "grounding_log_checkpoint_age_seconds",
                "Age of the oldest of the Dimensions' latest signed checkpoints.",
            )
            checkpoint.add_metric([], age)
            yield checkpoint


def _oldest_owed():
    """The time of the oldest event owed to an active subscription: a pending
    delivery's, or (the log on) one of the leaves past a lane's place, whose delivery
    no worker wrote yet (feed.worker.fan_out)."""
    found = [
        Delivery.objects.filter(state=DeliveryState.PENDING).aggregate(oldest=Min("event__time"))[
            "oldest"
        ]
    ]
    if log_link.log_on():
        lanes = (
            DeliveryLane.objects.filter(webhook__active=True)
            .filter(log_link.behind("webhook__dimension_id", "logindex"))
            .select_related("webhook")
        )
        found += [
            log_link.oldest_after(lane.webhook.dimension_id, lane.logindex,
                                  lane.webhook.event_types)
            for lane in lanes
        ]  # fmt: skip
    return min((at for at in found if at is not None), default=None)
