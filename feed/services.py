"""Webhook subscriptions: the writes of a Dimension's stewards (API.md "Event feed").

Each is a body `do_<name>` and its public entry (policies.actions): one transaction,
the applied audit event inside it, a refusal audited after its rollback. The signing
secret is returned once, by creation; nothing reads it back afterwards.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils import timezone

from common.kernel import compat
from common.kernel.refusals import Offender, Refusal
from feed import log_link, selectors, signing, ssrf
from feed.choices import DeliveryState, EventType
from feed.models import Delivery, DeliveryAttempt, DeliveryLane, Webhook
from policies import audit
from policies.actions import composable, dimension_context
from policies.choices import Role
from policies.operations import Operation
from policies.services import named_dimension, require_role

MAX_DESCRIPTION = 500
_NUMBER = re.compile(r"[1-9][0-9]{0,8}")
EVENT_TYPES = frozenset(str(t) for t in EventType)


@dataclass(frozen=True)
class Created:
    webhook: Webhook
    secret: str


def _invalid(offenders: list[Offender]) -> None:
    if offenders:
        raise Refusal("validation_error", "the request is not valid.", offenders=offenders)


def _event_type_offenders(event_types: Any) -> list[Offender]:
    if not isinstance(event_types, list):
        return [Offender("/event_types", "type", "event_types is a list of event types.")]
    return [
        Offender(f"/event_types/{i}", "enum", "not an event type of the feed.")
        for i, kind in enumerate(event_types)
        if kind not in EVENT_TYPES
    ]


def _description_offenders(description: Any) -> list[Offender]:
    if not isinstance(description, str):
        return [Offender("/description", "type", "description is a string.")]
    if len(description) > MAX_DESCRIPTION:
        return [Offender("/description", "max_length",
                         f"description is longer than {MAX_DESCRIPTION} characters.")]  # fmt: skip
    return []


@composable
def do_create_webhook(
    *, actor, dimension: Any, url: Any, event_types: Any = None, description: Any = ""
) -> Created:
    """A subscription of the Dimension (its steward): the URL checked against the SSRF
    rules (feed.ssrf), its lane for the delivery workers, and the secret, once."""
    found = named_dimension(actor, dimension)
    require_role(actor, found, *CREATE_WEBHOOK.roles)
    event_types = [] if event_types is None else event_types
    offenders = ssrf.url_offenders(url)
    offenders += _event_type_offenders(event_types)
    offenders += _description_offenders(description)
    _invalid(offenders)
    secret = signing.new_secret()
    webhook = Webhook(
        dimension=found,
        url=url,
        event_types=sorted(set(event_types)),
        description=description,
        secret=secret,
        created_by=actor if getattr(actor, "pk", None) else None,
    )
    _save(webhook, actor, "webhook created")
    # Owed the events of the leaves integrated from now on: each event committed after
    # this transaction gets a later index (feed.worker.fan_out).
    DeliveryLane.objects.create(webhook=webhook, logindex=log_link.last_index(found.pk))
    _audit(actor, CREATE_WEBHOOK.action, webhook)
    return Created(webhook, secret)


@composable
def do_change_webhook(*, actor, webhook_id: Any, active: Any) -> Webhook:
    """Turn a subscription on (again, after a 410 disabled it) or off. Off, it keeps
    its place in the log: turned on again, it is owed what was written meanwhile."""
    webhook = selectors.webhook_of(actor, webhook_id)
    if not isinstance(active, bool):
        _invalid([Offender("/active", "type", "active is true or false.")])
    webhook.active = active
    webhook.disabled_reason = "" if active else "turned off by a steward"
    _save(webhook, actor, "webhook turned on" if active else "webhook turned off")
    _audit(actor, CHANGE_WEBHOOK.action, webhook, active=active)
    return webhook


@composable
def do_delete_webhook(*, actor, webhook_id: Any) -> None:
    """Remove a subscription: no longer shown, nothing more delivered to it (its row
    and attempts stay, for the audit trail). Not a DELETE of the row: a write running
    now may already have owed it a delivery, and must not fail for it."""
    webhook = selectors.webhook_of(actor, webhook_id)
    webhook.active = False
    webhook.deleted_at = timezone.now()
    webhook.disabled_reason = "deleted by a steward"
    _save(webhook, actor, "webhook deleted")
    _audit(actor, DELETE_WEBHOOK.action, webhook)


@composable
def do_retry_delivery(*, actor, webhook_id: Any, n: Any) -> Delivery:
    """Send attempt `n`'s event to the subscription again, as soon as a worker can: the
    same event, the same `webhook-id`. One more try: a failure is final again."""
    webhook = selectors.webhook_of(actor, webhook_id)
    # Any other spelling of a number names no attempt (as an unknown number does).
    number = int(n) if isinstance(n, int) or _NUMBER.fullmatch(str(n)) else None
    attempt = (
        DeliveryAttempt.objects.filter(webhook=webhook, n=number).select_related("delivery").first()
        if number is not None
        else None
    )
    if attempt is None:
        raise Refusal("not_found", "the webhook has no delivery attempt of this number.")
    if not webhook.active:
        raise Refusal("webhook_inactive", "the webhook is turned off: turn it on first.")
    delivery = Delivery.objects.select_for_update().get(pk=attempt.delivery_id)
    if delivery.state != DeliveryState.PENDING:
        # A finished delivery gets one more try: a failure then is final again.
        delivery.attempts = len(settings.GROUNDING_WEBHOOK_RETRY_SCHEDULE)
    delivery.state = DeliveryState.PENDING
    delivery.due_at = timezone.now()
    delivery.finished_at = None
    delivery.save(update_fields=["state", "due_at", "attempts", "finished_at"])
    _audit(actor, RETRY_DELIVERY.action, webhook, n=number)
    return delivery


def _save(webhook: Webhook, actor, reason: str) -> None:
    compat.set_history_context(
        webhook, user=actor if getattr(actor, "pk", None) else None, reason=reason
    )
    webhook.save()


def _audit(actor, action: str, webhook: Webhook, **references: Any) -> None:
    audit.record(
        actor=actor,
        action=action,
        dimension=webhook.dimension,
        references={"webhook_id": str(webhook.pk), **references},
    )


def _webhook_context(kwargs: dict[str, Any]) -> dict[str, Any]:
    """A refused event names the subscription's Dimension only through the actor's own
    (policies.audit.record keeps a Dimension only where the actor holds a role)."""
    return {"actor": kwargs.get("actor"), "dimension": None}


# A webhook of a Dimension where the caller holds no role is not found; one of a
# Dimension where the caller is not a steward needs the role.
_WEBHOOK_REFUSALS = ("not_found", "role_required")
_SERIALIZERS = "feed.api.serializers"

CREATE_WEBHOOK = Operation(
    "create_webhook",
    body=do_create_webhook,
    input=f"{_SERIALIZERS}.WebhookInputSerializer",
    output=f"{_SERIALIZERS}.WebhookCreatedSerializer",
    roles=(Role.STEWARD,),
    refusals=("validation_error", *_WEBHOOK_REFUSALS),
    success=(201,),
    summary="Subscribe a receiver to a Dimension's events (steward); the secret, once",
    tags=("events",),
    context=dimension_context,
)
CHANGE_WEBHOOK = Operation(
    "change_webhook",
    body=do_change_webhook,
    input=f"{_SERIALIZERS}.WebhookChangeSerializer",
    output=f"{_SERIALIZERS}.WebhookSerializer",
    roles=(Role.STEWARD,),
    refusals=("validation_error", *_WEBHOOK_REFUSALS),
    summary="Turn a webhook on (again, after a 410) or off",
    tags=("events",),
    context=_webhook_context,
)
DELETE_WEBHOOK = Operation(
    "delete_webhook",
    body=do_delete_webhook,
    roles=(Role.STEWARD,),
    refusals=_WEBHOOK_REFUSALS,
    success=(204,),
    summary="Delete a webhook: no longer shown, nothing more delivered to it",
    tags=("events",),
    context=_webhook_context,
)
RETRY_DELIVERY = Operation(
    "retry_delivery",
    body=do_retry_delivery,
    output=f"{_SERIALIZERS}.RetriedSerializer",
    roles=(Role.STEWARD,),
    refusals=(*_WEBHOOK_REFUSALS, "webhook_inactive"),
    success=(202,),
    summary="Replay attempt n's event to the webhook (same webhook-id), as soon as a "
    "delivery worker can",
    tags=("events",),
    context=_webhook_context,
)
create_webhook = CREATE_WEBHOOK.entry
change_webhook = CHANGE_WEBHOOK.entry
delete_webhook = DELETE_WEBHOOK.entry
retry_delivery = RETRY_DELIVERY.entry
