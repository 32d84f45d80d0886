"""A database connection lost in the middle of a request (a failover under it) is 503
`database_unavailable` with Retry-After, never a 500: nothing half-written, the dead
session discarded so the next request reconnects, and a keyed retry writes once.

Real parts: gunicorn serving grounding.project.wsgi on the test run's PostgreSQL, and
the backend of the request terminated from a second connection (`pg_terminate_backend`,
as a leader change does to every session: SQLSTATE 57P01), or a session that finds its
server read-only (25006, a write that landed on a node just demoted).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from urllib.parse import quote

import psycopg
import pytest
import requests

from tests import factories
from tests.conftest import requires_postgres
from tests.ops.live import database_url, gunicorn, superuser, wait_for
from tests.ops.test_sick_database import assert_database_unavailable

pytestmark = [
    requires_postgres,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]

API = "/api/v1/groundings/"


def app_url(name: str, options: str = "") -> str:
    url = f"{database_url()}?application_name={name}"
    return url + (f"&options={quote(options)}" if options else "")


def backends(admin: psycopg.Connection, name: str, where: str = "TRUE") -> list[int]:
    rows = admin.execute(
        "SELECT pid FROM pg_stat_activity WHERE application_name = %s AND backend_type = "
        f"'client backend' AND {where}",
        (name,),
    ).fetchall()
    return [pid for (pid,) in rows]


@contextmanager
def row_held(admin_url: str, grounding_id: uuid.UUID):
    """The link's row locked FOR UPDATE by another session until the block ends."""
    with psycopg.connect(admin_url) as holder:
        holder.execute(
            "SELECT 1 FROM grounding_groundinglink WHERE grounding_id = %s FOR UPDATE",
            (grounding_id,),
        )
        yield
        holder.rollback()


def patch(base: str, link_id: uuid.UUID, token: str, key: str, owner: str) -> requests.Response:
    return requests.patch(
        f"{base}{API}{link_id}/",
        json={"owner_ref": owner, "revision_reason": "handover"},
        headers={"Authorization": f"Token {token}", "If-Match": '"1"', "Idempotency-Key": key},
        timeout=30,
    )


def in_thread(call: Callable[[], requests.Response]) -> tuple[threading.Thread, list]:
    answer: list = []
    thread = threading.Thread(target=lambda: answer.append(call()))
    thread.start()
    return thread, answer


def test_a_backend_terminated_mid_request_is_503_and_the_keyed_retry_writes_once(world, link):
    token = factories.token_for(world.curator)
    name = f"lost-{uuid.uuid4().hex[:8]}"
    url = database_url().replace("postgres://", "postgresql://")
    with gunicorn(app_url(name), threads=1) as base, superuser() as admin:
        with row_held(url, link.pk):
            thread, answer = in_thread(lambda: patch(base, link.pk, token, "k-1", "urn:team:x"))
            # The PATCH waits for the row inside its transaction: terminate its session.
            pid = wait_for(
                lambda: backends(admin, name, "wait_event_type = 'Lock'"), what="a lock wait"
            )[0]
            assert admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0]
            thread.join(timeout=30)
        lost = answer[0]
        assert_database_unavailable(lost)
        assert "terminat" not in lost.text  # the server's message is not shown
        link.refresh_from_db()
        assert link.revision == 1
        assert link.history.count() == 1  # nothing half-written
        # The same worker thread answers the retry on a new session, and writes once.
        retried = patch(base, link.pk, token, "k-1", "urn:team:x")
        assert retried.status_code == 200, retried.text[:500]
        assert "Idempotent-Replayed" not in retried.headers
        again = patch(base, link.pk, token, "k-1", "urn:team:x")
        assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
        assert again.json() == retried.json()
        assert pid not in backends(admin, name)
    link.refresh_from_db()
    assert (link.revision, link.owner_ref) == (2, "urn:team:x")
    assert link.history.count() == 2


def test_a_backend_terminated_in_its_commit_is_replayed_or_written_once(world, link):
    """The one moment the outcome is in doubt: the COMMIT may be durable and its answer
    lost. Commits are slowed for this server's sessions only (commit_delay, a superuser
    session setting) so the COMMIT can be caught running."""
    token = factories.token_for(world.curator)
    name = f"commit-{uuid.uuid4().hex[:8]}"
    slow = "-c commit_delay=100000 -c commit_siblings=0"
    with gunicorn(app_url(name, slow), threads=1) as base, superuser() as admin:
        thread, answer = in_thread(lambda: patch(base, link.pk, token, "k-2", "urn:team:y"))
        pid = wait_for(
            lambda: backends(admin, name, "state = 'active' AND query = 'COMMIT'"),
            what="a COMMIT running",
        )[0]
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        thread.join(timeout=30)
        first = answer[0]
        # Either the COMMIT was cut (503) or it finished before the signal (200).
        assert first.status_code in (200, 503), first.text[:500]
        if first.status_code == 503:
            assert_database_unavailable(first)
        retried = patch(base, link.pk, token, "k-2", "urn:team:y")
        assert retried.status_code == 200, retried.text[:500]
    link.refresh_from_db()
    assert (link.revision, link.owner_ref) == (2, "urn:team:y")
    assert link.history.count() == 2  # applied once, whichever way the COMMIT went


def test_a_write_on_a_read_only_server_is_503_and_the_session_is_discarded(world, link):
    # Every session of this server is read-only, as on a node that was just demoted.
    token = factories.token_for(world.curator)
    name = f"ro-{uuid.uuid4().hex[:8]}"
    readonly = "-c default_transaction_read_only=on"
    with gunicorn(app_url(name, readonly), threads=1) as base, superuser() as admin:
        for attempt in ("k-3", "k-3"):
            refused = patch(base, link.pk, token, attempt, "urn:team:z")
            assert_database_unavailable(refused)
            # The read-only sessions (the write's, its refusal audit's) are not kept:
            # the next request connects afresh, to whichever server leads by then.
            wait_for(lambda: not backends(admin, name), what="the sessions discarded")
    link.refresh_from_db()
    assert link.revision == 1 and link.history.count() == 1
