"""One webhook POST, to an address the SSRF guard checked, within a deadline.

The host is resolved at delivery time and the connection is made to a checked
address (never to what a second lookup might answer); TLS still verifies the
certificate for the host name. A timer shuts the socket at the deadline
(GROUNDING_WEBHOOK_TIMEOUT), so a receiver that hangs or trickles bytes is cut there.
At most 4 KiB of an answer is read; its body is never stored. Redirects are not
followed.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from feed import ssrf
from feed.choices import AttemptOutcome

USER_AGENT = "grounding-registry-webhooks/1"
MAX_ANSWER_BYTES = 4096


@dataclass(frozen=True)
class Answer:
    outcome: str
    status: int | None = None
    retry_after: float | None = None
    detail: str = ""
    duration_ms: int = 0


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Retry-After as seconds from now: delta-seconds or an HTTP date (RFC 9110)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def post(url: str, body: bytes, headers: dict[str, str], *, timeout: float) -> Answer:
    started = time.monotonic()

    def done(outcome: str, **kwargs) -> Answer:
        elapsed = int((time.monotonic() - started) * 1000)
        return Answer(outcome, duration_ms=elapsed, **kwargs)

    target, offenders = ssrf.parse(url)
    if target is None:
        return done(AttemptOutcome.REFUSED_ADDRESS, detail=offenders[0].detail)
    addresses, reason = ssrf.checked_addresses(target)
    if reason is not None:
        return done(AttemptOutcome.REFUSED_ADDRESS, detail=f"refused: {reason}")
    deadline = started + timeout
    try:
        sock = _connect(target, addresses, deadline)
    except TimeoutError:
        return done(AttemptOutcome.TIMEOUT, detail="no connection within the timeout")
    except (OSError, ssl.SSLError) as exc:
        return done(AttemptOutcome.CONNECTION, detail=type(exc).__name__)
    # The deadline for the whole exchange: a receiver sending a byte a second is cut.
    timer = threading.Timer(max(0.0, deadline - time.monotonic()), _shut, (sock,))
    timer.start()
    try:
        connection = http.client.HTTPConnection(target.host, target.port, timeout=timeout)
        connection.sock = sock  # pinned: http.client never resolves the name itself
        send = {**headers, "User-Agent": USER_AGENT, "Content-Length": str(len(body)),
                "Connection": "close"}  # fmt: skip
        connection.request("POST", target.path, body=body, headers=send)
        response = connection.getresponse()
        response.read(MAX_ANSWER_BYTES)
        status = response.status
        retry_after = retry_after_seconds(response.getheader("Retry-After"))
        connection.close()
    except TimeoutError:
        return done(AttemptOutcome.TIMEOUT, detail="no answer within the timeout")
    except (OSError, http.client.HTTPException, ssl.SSLError) as exc:
        if time.monotonic() >= deadline:
            return done(AttemptOutcome.TIMEOUT, detail="no answer within the timeout")
        return done(AttemptOutcome.CONNECTION, detail=type(exc).__name__)
    finally:
        timer.cancel()
        _shut(sock)
    if 200 <= status < 300:
        return done(AttemptOutcome.DELIVERED, status=status)
    if status == 410:
        return done(AttemptOutcome.GONE, status=status, detail="410 Gone")
    return done(AttemptOutcome.STATUS, status=status, retry_after=retry_after,
                detail=f"answered {status}")  # fmt: skip


def _connect(target: ssrf.Target, addresses: list, deadline: float) -> socket.socket:
    last: Exception = OSError("no address")
    for address in addresses:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        try:
            sock = socket.create_connection((str(address), target.port), timeout=remaining)
        except TimeoutError:
            raise
        except OSError as exc:
            last = exc
            continue
        if not target.tls:
            return sock
        context = ssl.create_default_context()
        try:
            return context.wrap_socket(sock, server_hostname=target.host)
        except Exception:
            sock.close()
            raise
    raise last


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
