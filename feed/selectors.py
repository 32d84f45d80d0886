"""The feed's reused queries, each scoped to the caller's Dimensions (tenancy: another
Dimension's subscription is not found, by the same statement as an unknown one)."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import QuerySet

from common.kernel.refusals import Refusal
from feed.models import DeliveryAttempt, Webhook
from policies.choices import Role
from policies.memberships import memberships
from policies.services import is_operator

STEWARD = (Role.STEWARD,)


def stewarded_dimension_ids(actor) -> list[int]:
    held = memberships(actor)
    return [pk for pk, roles in held.roles.items() if set(roles) & {str(r) for r in STEWARD}]


def member_dimension_ids(actor) -> list[int]:
    held = memberships(actor)
    return [pk for pk, roles in held.roles.items() if roles]


def webhooks_for(actor) -> QuerySet[Webhook]:
    """The subscriptions of the Dimensions the actor stewards (operators: all)."""
    webhooks = (
        Webhook.objects.filter(deleted_at__isnull=True)
        .select_related("dimension")
        .order_by("created_at", "webhook_id")
    )
    if is_operator(actor):
        return webhooks
    stewarded = stewarded_dimension_ids(actor)
    if not stewarded:
        raise Refusal("role_required", "webhooks are managed by stewards of a Dimension.")
    return webhooks.filter(dimension_id__in=stewarded)


def webhook_of(actor, webhook_id: Any) -> Webhook:
    """The actor's subscription of this id: another Dimension's is `not_found`, one of
    a Dimension where the actor holds another role is `role_required`."""
    try:
        key = uuid.UUID(str(webhook_id))
    except ValueError:
        key = None
    found = None
    if key is not None:
        scope = Webhook.objects.select_related("dimension").filter(pk=key, deleted_at__isnull=True)
        if not is_operator(actor):
            scope = scope.filter(dimension_id__in=member_dimension_ids(actor))
        found = scope.first()
    if found is None:
        raise Refusal("not_found", "no webhook of yours has this id.")
    if not is_operator(actor) and found.dimension_id not in stewarded_dimension_ids(actor):
        raise Refusal("role_required", "webhooks are managed by stewards of their Dimension.")
    return found


def attempts_of(webhook: Webhook) -> QuerySet[DeliveryAttempt]:
    return (
        DeliveryAttempt.objects.filter(webhook=webhook)
        .select_related("delivery__event")
        .order_by("-n")
    )
