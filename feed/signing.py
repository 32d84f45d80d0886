"""Standard Webhooks 1.0 signatures (the `standardwebhooks` library).

A delivery carries `webhook-id` (the event id: the same on every retry, so a receiver
deduplicates by it), `webhook-timestamp` (this attempt's Unix seconds) and
`webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. The secret is
`whsec_` and 32 random bytes in base64, shown to the steward once.
"""

from __future__ import annotations

import base64
import os
from datetime import UTC, datetime

from standardwebhooks.webhooks import Webhook as Signer

SECRET_BYTES = 32


def new_secret() -> str:
    return "whsec_" + base64.b64encode(os.urandom(SECRET_BYTES)).decode("ascii")


def headers(secret: str, message_id: str, body: bytes, at: datetime | None = None) -> dict:
    """The Standard Webhooks headers of one attempt sending `body`."""
    at = (at or datetime.now(UTC)).astimezone(UTC)
    signature = Signer(secret).sign(message_id, at, body.decode("utf-8"))
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": signature,
    }
