"""Delivery workers (`manage.py deliver_events`): each event to each subscription that
wants it, at least once, in order per subscription and subject.

A worker thread claims one subscription's lane with `SELECT … FOR UPDATE SKIP LOCKED`
(the least recently served lane with a due delivery, or whose Dimension's log moved
past the lane's place), so several workers on several machines never serve one
subscription at once, and a slow or hanging receiver holds one thread, never another
subscription's deliveries. Inside that transaction it writes the deliveries the
subscription is owed since its place in the log (`fan_out`: the events of the leaves
integrated since, in log order, the types it wants; a write only stores its events),
delivers a batch of ready deliveries — due, and no earlier pending one of the same
subject, so each of another subject — the first alone, then the others at once (at
most SENDERS in flight, on the batch's transport session: resolved and checked once,
its connections kept), records the batch's attempts in one INSERT and its
deliveries' outcomes in one UPDATE, and commits. A worker killed
mid-batch loses nothing: its transaction rolls back with its connection, the lane's
lock is released, and the deliveries it was sending are still pending for the next
worker (the receiver may see an event twice, with the same `webhook-id`).

Outcomes (API.md "Event feed"): 2xx delivered; 410 disables the subscription (audited
as `disable_webhook`) and fails the delivery; timeouts, connection failures and other
statuses are retried after GROUNDING_WEBHOOK_RETRY_SCHEDULE's next step, or after the
receiver's Retry-After on 429, 502 and 504 (at most the schedule's longest step);
once the schedule is spent the delivery is failed (a steward may replay it).
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import close_old_connections, connections, transaction
from django.db.models import Exists, F, OuterRef, Q, Subquery
from django.utils import timezone

from common.kernel import compat, lost_connection
from feed import envelope, log_link, signing, transport
from feed.choices import AttemptOutcome, DeliveryState
from feed.models import Delivery, DeliveryAttempt, DeliveryLane, Event, Webhook
from policies import audit

logger = logging.getLogger("grounding.feed")

BATCH = 50
# Leaves of the log whose events one pass turns into deliveries, at most.
FAN_OUT = 1000
RETRY_AFTER_STATUSES = frozenset({429, 502, 504})
# Deliveries of one batch in flight at once, at most (each of another subject).
SENDERS = 8


@dataclass
class Served:
    """What one lane's batch did."""

    webhook_id: object = None
    attempts: int = 0
    outcomes: dict[str, int] | None = None
    owed: int = 0  # deliveries written by its fan-out


def next_delay(attempts_made: int, answer: transport.Answer) -> float | None:
    """Seconds until the next try after `attempts_made` failed ones (None: give up)."""
    schedule = settings.GROUNDING_WEBHOOK_RETRY_SCHEDULE
    if attempts_made > len(schedule):
        return None
    delay = float(schedule[attempts_made - 1])
    if answer.status in RETRY_AFTER_STATUSES and answer.retry_after is not None:
        delay = min(answer.retry_after, float(max(schedule)))
    return delay


def _due(now) -> Exists:
    return Exists(
        Delivery.objects.filter(
            webhook_id=OuterRef("webhook_id"), state=DeliveryState.PENDING, due_at__lte=now
        )
    )


def claim_lane(now) -> DeliveryLane | None:
    """Lock the least recently served lane of an active subscription with a due
    delivery or events to fan out, skipping lanes another worker holds (call inside a
    transaction)."""
    work = Q(_due(now))
    if log_link.log_on():
        work |= Q(log_link.behind("webhook__dimension_id", "logindex"))
    return (
        DeliveryLane.objects.select_for_update(skip_locked=True, of=("self",))
        .filter(webhook__active=True)
        .filter(work)
        # Never-served lanes first, then the longest waiting.
        .order_by(F("served_at").asc(nulls_first=True), "webhook_id")
        .first()
    )


def fan_out(lane: DeliveryLane, webhook: Webhook, now, limit: int = FAN_OUT) -> int:
    """Write the deliveries of the events of the leaves the Dimension's log integrated
    after the lane's place (at most `limit` leaves), in log order, of the types the
    subscription wants, and move the lane there; how many (log on only).

    Every event committed after the subscription was created is owed: its leaf gets an
    index after the one the lane started from (`feed.services`), and an index is given
    to committed leaves only, contiguously, so a place never skips a leaf that commits
    later. Conflicts are ignored: with the log turned off the outbox itself writes the
    deliveries, so a delivery may already exist."""
    last = log_link.last_index(webhook.dimension_id)
    if last <= lane.logindex:
        return 0
    upto = min(last, lane.logindex + limit)
    wanted = set(webhook.event_types)
    owed = [
        Delivery(webhook=webhook, event_id=event.pk, subject=event.subject,
                 sequence=event.sequence, due_at=now)
        for event in log_link.events_between(webhook.dimension_id, lane.logindex, upto)
        if not wanted or event.type in wanted
    ]  # fmt: skip
    Delivery.objects.bulk_create(owed, ignore_conflicts=True)
    lane.logindex = upto
    return len(owed)


def ready_deliveries(webhook_id, now, limit: int = BATCH) -> list[Delivery]:
    """Due pending deliveries with no earlier pending one of the same subject, each
    with its event.

    The deliveries alone first, in the order of their partial index (webhook, due_at,
    id): the scan stops at the `limit`-th ready one, whatever the backlog. Joined to
    their events in the same statement, the planner read every event of the table
    and sorted the whole backlog (16 ms at 2,000 pending, 0.8 s before an ANALYZE)."""
    first_of_subject = (
        Delivery.objects.filter(webhook_id=OuterRef("webhook_id"), subject=OuterRef("subject"),
                                state=DeliveryState.PENDING)
        .order_by("sequence", "id")
        .values("id")[:1]
    )  # fmt: skip
    ready = list(
        Delivery.objects.filter(webhook_id=webhook_id, state=DeliveryState.PENDING,
                                due_at__lte=now, id=Subquery(first_of_subject))
        .order_by("due_at", "id")[:limit]
    )  # fmt: skip
    events = Event.objects.in_bulk([delivery.event_id for delivery in ready])
    for delivery in ready:
        delivery.event = events[delivery.event_id]
    return ready


def serve_one_lane(*, batch: int = BATCH, senders: Executor | None = None) -> Served | None:
    """Claim one lane and deliver a batch of its ready deliveries (concurrently on
    `senders`, one thread per delivery in flight; None: one after another); None if no
    lane with a due delivery is free."""
    # Committed leaves get their index first (unless a sequencer holds their log):
    # an event is sent with its logindex. Outside the lane's transaction, so the log
    # is never held while a receiver answers.
    log_link.integrate(wait=False)
    with transaction.atomic():
        now = timezone.now()
        lane = claim_lane(now)
        if lane is None:
            return None
        webhook = Webhook.objects.select_related("dimension").get(pk=lane.webhook_id)
        owed = fan_out(lane, webhook, now) if log_link.log_on() else 0
        sending = _sendable(ready_deliveries(webhook.pk, now, batch))
        served = Served(webhook.pk, 0, {}, owed)
        if sending:
            with transport.Session(
                webhook.url, timeout=settings.GROUNDING_WEBHOOK_TIMEOUT
            ) as session:
                sent = _send_all(webhook, sending, session, senders)
            record(webhook, lane, sent)
            served.attempts = len(sent)
            for _delivery, answer, _at in sent:
                served.outcomes[answer.outcome] = served.outcomes.get(answer.outcome, 0) + 1
        lane.served_at = timezone.now()
        lane.save(update_fields=["attempts", "served_at", "logindex"])
        return served


def _sendable(deliveries: list[Delivery]) -> list[tuple[Delivery, int | None]]:
    """The deliveries to send now, each with its logindex: those whose leaf is
    integrated (a later pass sends the others, with it), one per subject (at most one
    event of a subject is ever in flight: ready_deliveries holds back the later ones)."""
    indexes = _logindexes(deliveries)
    subjects: set[str] = set()
    sendable = []
    for delivery in deliveries:
        logindex = indexes.get(delivery.event.audit_event_id)
        if log_link.log_on() and logindex is None:
            continue
        if delivery.subject in subjects:
            continue
        subjects.add(delivery.subject)
        sendable.append((delivery, logindex))
    return sendable


def _logindexes(deliveries: list[Delivery]) -> dict:
    """Each delivery's logindex (an event whose leaf is not integrated yet is sent by
    a later pass, with it)."""
    if not deliveries or not log_link.log_on():
        return {}
    return log_link.logindexes(d.event.audit_event_id for d in deliveries)


Sent = tuple[Delivery, transport.Answer, datetime]


def _send_all(webhook: Webhook, sending: list, session: transport.Session,
              senders: Executor | None) -> list[Sent]:  # fmt: skip
    """Send the batch: its first delivery alone (a receiver answering 410 gets nothing
    more), then the others at once on `senders` — of different subjects, so of no
    order among themselves. The outcomes in the batch's order."""

    def send(item: tuple[Delivery, int | None]) -> Sent:
        delivery, logindex = item
        return delivery, _send(webhook, delivery, logindex, session), timezone.now()

    first = send(sending[0])
    if first[1].outcome == AttemptOutcome.GONE or len(sending) == 1:
        return [first]
    rest = sending[1:]
    return [first, *(senders.map(send, rest) if senders is not None else map(send, rest))]


def _send(webhook: Webhook, delivery: Delivery, logindex, session) -> transport.Answer:
    event = delivery.event
    body = envelope.body(event, webhook.dimension.name, logindex)
    headers = signing.headers(webhook.secret, str(event.event_id), body)
    headers["Content-Type"] = envelope.CONTENT_TYPE
    return session.post(body, headers)


def record(webhook: Webhook, lane: DeliveryLane, sent: list[Sent]) -> None:
    """A batch's outcomes: its attempts numbered on from the lane's count in the
    batch's order, in one INSERT, and its deliveries' new states in one UPDATE."""
    attempts = []
    gone = False
    for delivery, answer, at in sent:
        lane.attempts += 1
        delivery.attempts += 1
        next_due = None
        if answer.outcome == AttemptOutcome.DELIVERED:
            delivery.state = DeliveryState.DELIVERED
            delivery.finished_at = at
        elif answer.outcome == AttemptOutcome.GONE:
            delivery.state = DeliveryState.FAILED
            delivery.finished_at = at
            gone = True
        else:
            delay = next_delay(delivery.attempts, answer)
            if delay is None:
                delivery.state = DeliveryState.FAILED
                delivery.finished_at = at
            else:
                next_due = delivery.due_at = at + timedelta(seconds=delay)
        attempts.append(DeliveryAttempt(
            webhook=webhook, n=lane.attempts, delivery=delivery, attempted_at=at,
            outcome=answer.outcome, status_code=answer.status,
            duration_ms=answer.duration_ms, detail=answer.detail[:255], next_due_at=next_due,
        ))  # fmt: skip
    DeliveryAttempt.objects.bulk_create(attempts)
    _update([delivery for delivery, _answer, _at in sent])
    if gone:
        _disable(webhook, "the receiver answered 410 Gone")


_UPDATE = """UPDATE {table} AS d SET state = v.state, due_at = v.due_at, attempts = v.attempts,
       finished_at = v.finished_at
FROM unnest(%s::bigint[], %s::varchar[], %s::timestamptz[], %s::integer[],
            %s::timestamptz[]) AS v(id, state, due_at, attempts, finished_at)
WHERE d.id = v.id
"""


def _update(deliveries: list[Delivery]) -> None:
    """The deliveries' new states, one statement (PostgreSQL: their values as arrays;
    bulk_update's CASE per column and row cost more to build than the batch's
    deliveries took to send)."""
    connection = connections[Delivery.objects.db]
    if connection.vendor != "postgresql":
        Delivery.objects.bulk_update(deliveries, ["state", "due_at", "attempts", "finished_at"])
        return
    columns = [[d.pk for d in deliveries], [d.state for d in deliveries],
               [d.due_at for d in deliveries], [d.attempts for d in deliveries],
               [d.finished_at for d in deliveries]]  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(
            _UPDATE.format(table=connection.ops.quote_name(Delivery._meta.db_table)), columns
        )


def _disable(webhook: Webhook, reason: str) -> None:
    webhook.active = False
    webhook.disabled_reason = reason
    compat.set_history_context(webhook, user=None, reason=reason)
    webhook.save()
    audit.record(
        actor=None,
        action="disable_webhook",
        dimension=webhook.dimension,
        references={"webhook_id": str(webhook.pk), "reason": "410"},
    )


def deliver_until_idle(*, limit: int = 10_000, batch: int = BATCH) -> int:
    """Serve lanes until none has a ready delivery (tests, `deliver_events --once`);
    the number of attempts made."""
    made, idle = 0, 0
    with ThreadPoolExecutor(SENDERS, thread_name_prefix="send") as senders:
        for _ in range(limit):
            served = serve_one_lane(batch=batch, senders=senders)
            if served is None:
                break
            made += served.attempts
            # A lane whose due deliveries all wait behind earlier ones of their
            # subjects serves nothing; once every lane did, nothing is ready.
            idle = idle + 1 if served.attempts == 0 and served.owed == 0 else 0
            if idle > DeliveryLane.objects.count():
                break
    return made


def run(*, threads: int, poll: float, stop: threading.Event) -> None:
    """Deliver until `stop` is set: `threads` threads, each serving lanes and waiting
    `poll` seconds when none is due. Each thread has its own database connection."""

    def loop() -> None:
        idle = 0
        senders = ThreadPoolExecutor(SENDERS, thread_name_prefix="send")
        reconnecting = lost_connection.Reconnecting(f"delivery {threading.current_thread().name}")
        try:
            while not stop.is_set():
                close_old_connections()
                try:
                    served = serve_one_lane(senders=senders)
                    reconnecting.succeeded()
                except Exception as exc:  # a failover, a restart: back off, reconnect
                    reconnecting.failed(exc, stop)
                    continue
                busy = served is not None and (served.attempts or served.owed)
                idle = idle + 1 if served is not None and not busy else 0
                if served is None or idle >= 3:
                    idle = 0
                    stop.wait(poll)
        finally:
            senders.shutdown()
            connections.close_all()

    workers = [threading.Thread(target=loop, name=f"deliver-{i}", daemon=True)
               for i in range(threads)]  # fmt: skip
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
