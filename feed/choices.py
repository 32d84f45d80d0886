"""The event feed's vocabularies (API.md "Event feed")."""

from django.db import models

LINK = "org.grounding.link."


class EventType(models.TextChoices):
    REGISTERED = LINK + "registered", "registered"
    REVISED = LINK + "revised", "revised"
    ASSESSED = LINK + "assessed", "assessed"
    ANCHORED = LINK + "anchored", "anchored"
    WITHDRAWN = LINK + "withdrawn", "withdrawn"
    DISPOSED = LINK + "disposed", "disposed"
    RECHECK_REQUESTED = LINK + "recheck_requested", "recheck requested"
    PASSAGE_IMPORTED = "org.grounding.passage.imported", "passage imported"
    DECISION_RECORDED = "org.grounding.decision.recorded", "decision recorded"
    DECISION_REVOKED = "org.grounding.decision.revoked", "decision revoked"


class DeliveryState(models.TextChoices):
    PENDING = "pending", "pending"
    DELIVERED = "delivered", "delivered"
    FAILED = "failed", "failed (retries exhausted, or the endpoint is gone)"


class AttemptOutcome(models.TextChoices):
    DELIVERED = "delivered", "delivered (2xx)"
    STATUS = "status", "non-2xx answer"
    GONE = "gone", "410 Gone: the subscription was disabled"
    TIMEOUT = "timeout", "no answer within GROUNDING_WEBHOOK_TIMEOUT"
    CONNECTION = "connection", "connection or TLS failure"
    REFUSED_ADDRESS = "refused_address", "the URL resolved to a refused address"
