"""The resumable stream (API.md "Event feed"): a Dimension's events in log order, as
a JSON page or as `text/event-stream`, resumed from an opaque cursor.

A cursor is signed (Django's signing, salted), so a forged one is refused (400
`invalid_cursor`); one that names no event of the Dimension (stale: another database,
another Dimension's) is refused the same way. Each event's SSE `id:` is its cursor,
so a client that reconnects with `Last-Event-ID` resumes right after it.

Long-lived streams: under ASGI (grounding/project/asgi.py, uvicorn) a stream is an
async iterator — an idle subscriber is a sleeping coroutine, and one watcher per
process polls the outbox head for all of them (`Watcher`). Under WSGI a stream holds
its thread, so it ends after GROUNDING_STREAM_WSGI_SECONDS and the client resumes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core import signing
from django.db import close_old_connections, connections

from common.kernel.refusals import Offender, Refusal
from feed import envelope, log_link
from feed.models import Event
from policies.models import Dimension

SALT = "grounding.feed.cursor"
PAGE_MAX = 500
PAGE_DEFAULT = 100


@dataclass(frozen=True)
class Position:
    """Where a cursor points: after this event (logindex, outbox id)."""

    logindex: int
    event: int


def cursor_of(dimension_id: int, logindex: int | None, event_pk: int) -> str:
    return signing.Signer(salt=SALT).sign(f"{dimension_id}-{logindex or 0}-{event_pk}")


def position_of(cursor: str, dimension: Dimension, pointer: str) -> Position:
    """The position a cursor names, or 400 invalid_cursor (forged, or stale)."""

    def refuse(detail: str) -> Refusal:
        return Refusal(
            "invalid_cursor",
            "the cursor is not one this stream gave.",
            offenders=[Offender(pointer, "invalid_cursor", detail)],
        )

    try:
        value = signing.Signer(salt=SALT).unsign(cursor)
        dimension_id, logindex, event_pk = (int(part) for part in value.split("-"))
    except (signing.BadSignature, ValueError):
        raise refuse("the cursor is not signed by this registry.") from None
    if dimension_id != dimension.pk:
        raise refuse("the cursor belongs to another stream.")
    event = Event.objects.filter(pk=event_pk, dimension_id=dimension.pk).first()
    if event is None or (log_link.log_on() and log_link.leaf_index_of(event) != logindex):
        raise refuse("the cursor names no event of this stream (stale).")
    return Position(logindex, event_pk)


def page(dimension: Dimension, after: Position | None, limit: int) -> list[dict]:
    """Up to `limit` events after `after`, each as its CloudEvent JSON plus `cursor`."""
    key = (after.logindex, after.event) if after is not None else None
    found = []
    for event, logindex in log_link.integrated_page(dimension.pk, key, limit):
        document = json.loads(envelope.body(event, dimension.name, logindex))
        found.append((cursor_of(dimension.pk, logindex, event.pk), document))
    return found


def sse(cursor: str, document: dict) -> str:
    data = json.dumps(document, separators=(",", ":"))
    return f"id: {cursor}\nevent: {document['type']}\ndata: {data}\n\n"


HEARTBEAT = ": keep-alive\n\n"
RETRY = "retry: 2000\n\n"


def _fetch(dimension: Dimension, after: Position | None) -> list:
    """A page for an ASGI stream, from an executor thread: that thread's connection is
    closed when unusable or older than CONN_MAX_AGE, as Django does around requests."""
    close_old_connections()
    try:
        return page(dimension, after, PAGE_MAX)
    finally:
        close_old_connections()


def _advance(cursor: str) -> Position:
    value = signing.Signer(salt=SALT).unsign(cursor)
    _, logindex, event_pk = (int(part) for part in value.split("-"))
    return Position(logindex, event_pk)


def wsgi_stream(dimension: Dimension, after: Position | None) -> Iterator[str]:
    """A stream that holds its (WSGI) thread, so it ends after a while."""
    yield RETRY
    ends = time.monotonic() + settings.GROUNDING_STREAM_WSGI_SECONDS
    beat = time.monotonic()
    while True:  # at least one look, however short the stream
        found = page(dimension, after, PAGE_MAX)
        for cursor, document in found:
            yield sse(cursor, document)
            after = _advance(cursor)
        if len(found) == PAGE_MAX:
            continue
        if time.monotonic() >= ends:
            return
        if time.monotonic() - beat >= settings.GROUNDING_STREAM_HEARTBEAT_SECONDS:
            beat = time.monotonic()
            yield HEARTBEAT
        time.sleep(settings.GROUNDING_STREAM_POLL_SECONDS)


class Watcher:
    """One per event loop: polls the outbox's head and wakes the streams waiting on
    it, so idle subscribers cost no query each."""

    def __init__(self) -> None:
        self.head: tuple | None = None
        self.changed = asyncio.Event()
        self.task: asyncio.Task | None = None

    @staticmethod
    def _head() -> tuple:
        close_old_connections()
        try:
            return log_link.head()
        finally:
            close_old_connections()

    async def run(self) -> None:
        head = sync_to_async(self._head, thread_sensitive=False)
        while True:
            try:
                now = await head()
            except Exception:  # a database hiccup: try again next poll
                now = self.head
            if now != self.head:
                self.head = now
                self.changed.set()
                self.changed = asyncio.Event()
            await asyncio.sleep(settings.GROUNDING_STREAM_POLL_SECONDS)

    async def wait(self, timeout: float) -> None:
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self.run())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.changed.wait(), timeout)


_watchers: dict[int, Watcher] = {}


def watcher() -> Watcher:
    loop = asyncio.get_running_loop()
    return _watchers.setdefault(id(loop), Watcher())


async def asgi_stream(dimension: Dimension, after: Position | None) -> AsyncIterator[str]:
    """A stream that lasts until the client goes (ASGI): a sleeping coroutine while
    idle, woken by the process's watcher when the outbox moves."""
    fetch = sync_to_async(_fetch, thread_sensitive=False)
    # The request's own thread (Django runs a request's sync middleware and view in
    # one, kept until the response ends) closes its database connection now that all
    # of them ran: an open stream holds no connection, whatever its length.
    await sync_to_async(connections.close_all, thread_sensitive=True)()
    yield RETRY
    beat = time.monotonic()
    while True:
        found = await fetch(dimension, after)
        for cursor, document in found:
            yield sse(cursor, document)
            after = _advance(cursor)
        if len(found) == PAGE_MAX:
            continue
        await watcher().wait(settings.GROUNDING_STREAM_HEARTBEAT_SECONDS)
        if time.monotonic() - beat >= settings.GROUNDING_STREAM_HEARTBEAT_SECONDS:
            beat = time.monotonic()
            yield HEARTBEAT
