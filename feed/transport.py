"""Webhook POSTs, to an address the SSRF guard checked, each within a deadline.

A `Session` serves one lane's batch: it resolves the host and checks every address
once (feed.ssrf), then connects only to a checked address (never to what a second
lookup might answer; TLS still verifies the certificate for the host name) and keeps
the connections alive for the batch's next POSTs, one at a time each. A session
never outlives its batch, so the next batch resolves and checks again: a DNS answer
changed to a private address is refused from then on.

Each POST is cut at its deadline (GROUNDING_WEBHOOK_TIMEOUT) for the whole exchange:
one watchdog thread per process shuts the socket then, so a receiver that hangs or
trickles bytes is cut too, on a fresh connection or a kept one. At most 4 KiB of an
answer is read; its body is never stored, and a connection whose answer was longer
is not kept. Redirects are not followed.
"""

from __future__ import annotations

import contextlib
import heapq
import http.client
import itertools
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from feed import ssrf
from feed.choices import AttemptOutcome

USER_AGENT = "grounding-registry-webhooks/1"
MAX_ANSWER_BYTES = 4096
# A kept connection the receiver closed while idle fails at once, before any answer:
# the POST is made once more on a new connection (the receiver may then see it twice,
# with the same webhook-id: at least once).
STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
         ConnectionAbortedError)  # fmt: skip


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


@dataclass(order=True)
class _Deadline:
    at: float
    order: int
    sock: socket.socket | None = field(compare=False, default=None)
    fired: bool = field(compare=False, default=False)


class _Watchdog:
    """Shuts each armed socket at its deadline: one thread for every POST of the
    process (a timer thread per POST cost a thread's start each)."""

    def __init__(self) -> None:
        self._heap: list[_Deadline] = []
        self._wake = threading.Condition()
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, at: float, sock: socket.socket) -> _Deadline:
        deadline = _Deadline(at, next(self._order), sock)
        with self._wake:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="webhook-deadlines",
                                                daemon=True)  # fmt: skip
                self._thread.start()
            heapq.heappush(self._heap, deadline)
            if self._heap[0] is deadline:
                self._wake.notify()
        return deadline

    def disarm(self, deadline: _Deadline) -> bool:
        """Whether the deadline had already shut the socket."""
        with self._wake:
            deadline.sock = None  # left in the heap, dropped when its time comes
            return deadline.fired

    def _run(self) -> None:
        with self._wake:
            while True:
                now = time.monotonic()
                while self._heap and (self._heap[0].sock is None or self._heap[0].at <= now):
                    due = heapq.heappop(self._heap)
                    if due.sock is not None:
                        due.fired = True
                        _shut(due.sock)
                        due.sock = None
                self._wake.wait(self._heap[0].at - now if self._heap else None)


_WATCHDOG = _Watchdog()


class _Pinned(http.client.HTTPConnection):
    """A connection over a socket made to a checked address: it never opens one
    itself (http.client would resolve the host name again)."""

    def connect(self) -> None:
        raise ConnectionError("a pinned connection is not reopened")


class Session:
    """The POSTs of one batch to one URL (a context manager; thread-safe: each POST
    takes a kept connection or makes one)."""

    def __init__(self, url: str, *, timeout: float) -> None:
        self.timeout = timeout
        self.refused: str | None = None
        self.addresses: list = []
        self._kept: list[_Pinned] = []
        self._lock = threading.Lock()
        self.target, offenders = ssrf.parse(url)
        if self.target is None:
            self.refused = offenders[0].detail
            return
        self.addresses, reason = ssrf.checked_addresses(self.target)
        if reason is not None:
            self.refused = f"refused: {reason}"

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            kept, self._kept = self._kept, []
        for connection in kept:
            connection.close()

    def post(self, body: bytes, headers: dict[str, str]) -> Answer:
        started = time.monotonic()
        deadline = started + self.timeout

        def done(outcome: str, **kwargs) -> Answer:
            elapsed = int((time.monotonic() - started) * 1000)
            return Answer(outcome, duration_ms=elapsed, **kwargs)

        if self.refused is not None:
            return done(AttemptOutcome.REFUSED_ADDRESS, detail=self.refused)
        send = {**headers, "User-Agent": USER_AGENT, "Content-Length": str(len(body))}
        connection = self._take()
        while True:
            kept = connection is not None
            if connection is None:
                try:
                    connection = self._connect(deadline)
                except TimeoutError:
                    return done(AttemptOutcome.TIMEOUT, detail="no connection within the timeout")
                except (OSError, ssl.SSLError) as exc:
                    return done(AttemptOutcome.CONNECTION, detail=type(exc).__name__)
            try:
                status, retry_after = self._exchange(connection, body, send, deadline)
                break
            except STALE as exc:
                connection.close()
                if kept and time.monotonic() < deadline:
                    connection = None
                    continue  # once more, on a new connection
                if time.monotonic() >= deadline:
                    return done(AttemptOutcome.TIMEOUT, detail="no answer within the timeout")
                return done(AttemptOutcome.CONNECTION, detail=type(exc).__name__)
            except TimeoutError:
                connection.close()
                return done(AttemptOutcome.TIMEOUT, detail="no answer within the timeout")
            except (OSError, http.client.HTTPException, ssl.SSLError) as exc:
                connection.close()
                if time.monotonic() >= deadline:
                    return done(AttemptOutcome.TIMEOUT, detail="no answer within the timeout")
                return done(AttemptOutcome.CONNECTION, detail=type(exc).__name__)
        if 200 <= status < 300:
            return done(AttemptOutcome.DELIVERED, status=status)
        if status == 410:
            return done(AttemptOutcome.GONE, status=status, detail="410 Gone")
        return done(AttemptOutcome.STATUS, status=status, retry_after=retry_after,
                    detail=f"answered {status}")  # fmt: skip

    def _exchange(self, connection: _Pinned, body: bytes, headers: dict, deadline: float):
        """One request and its answer, cut at the deadline; the connection is kept for
        the next POST when the answer was read whole and the receiver keeps it open."""
        sock = connection.sock
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        watch = _WATCHDOG.arm(deadline, sock)
        try:
            connection.request("POST", self.target.path, body=body, headers=headers)
            response = connection.getresponse()
            response.read(MAX_ANSWER_BYTES)
        finally:
            fired = _WATCHDOG.disarm(watch)
        if fired:
            # What was read ends where the socket was shut: http.client takes an end of
            # stream in the headers for their end, so a trickled answer would parse.
            raise TimeoutError
        if response.isclosed() and connection.sock is not None:
            with self._lock:
                self._kept.append(connection)
        else:
            connection.close()  # an answer longer than we read, or the receiver closes
        return response.status, retry_after_seconds(response.getheader("Retry-After"))

    def _take(self) -> _Pinned | None:
        with self._lock:
            return self._kept.pop() if self._kept else None

    def _connect(self, deadline: float) -> _Pinned:
        last: Exception = OSError("no address")
        for address in self.addresses:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            try:
                sock = socket.create_connection((str(address), self.target.port),
                                                timeout=remaining)  # fmt: skip
            except TimeoutError:
                raise
            except OSError as exc:
                last = exc
                continue
            # http.client sends a request's headers and body in two writes: on a kept
            # connection Nagle's algorithm held the body until the receiver's delayed
            # ACK of the headers, 40 ms a POST.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.target.tls:
                context = ssl.create_default_context()
                try:
                    sock = context.wrap_socket(sock, server_hostname=self.target.host)
                except Exception:
                    sock.close()
                    raise
            connection = _Pinned(self.target.host, self.target.port)
            connection.sock = sock  # pinned: http.client never resolves the name itself
            return connection
        raise last


def post(url: str, body: bytes, headers: dict[str, str], *, timeout: float) -> Answer:
    """One POST in a session of its own."""
    with Session(url, timeout=timeout) as session:
        return session.post(body, headers)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
