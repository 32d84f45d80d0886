"""Answers built from the commit (issue 27, item 2): once a write's transaction has
committed, nothing the database does afterwards changes its answer.

The drills run on PostgreSQL, through the test client (the request runs on this
thread's connection): right after the write's COMMIT another connection either
takes an ACCESS EXCLUSIVE lock on the tables an answer read back after the commit
(the disclosure decisions, the links, the memberships), with a short lock_timeout
on the writer's session, or terminates the writer's backend. A committed write
answers 2xx with what it wrote, and its request id has one audit outcome, applied.

Where the hook sits: Django's own `execute_wrapper` and `transaction.on_commit`, in
the test: the first statement inside the write's transaction registers a callback
that Django runs once that transaction has committed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from django.db import connection, connections, transaction

from grounding.models import GroundingLink
from policies.models import AuditEvent
from tests import factories
from tests.api.helpers import client_for, register_body
from tests.conftest import requires_postgres

pytestmark = [requires_postgres, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

# The tables an answer read back after the commit touched (issue 27).
READ_BACK_TABLES = (
    "policies_disclosuredecision",
    "grounding_groundinglink",
    "policies_dimensionmembership",
)
LOCK_TIMEOUT = "300ms"


@contextmanager
def after_the_commit(action: Callable[[int], None]) -> Iterator[list[int]]:
    """Run `action(writer backend pid)` once the first write transaction (durable)
    opened on this thread's connection inside the block has committed; yields the
    pids it ran for."""
    ran: list[int] = []
    armed: list[bool] = []

    def wrapper(execute, sql, params, many, context):
        # A public entry's transaction is the one durable block (policies.actions).
        if not armed and connection.atomic_blocks and connection.atomic_blocks[0].durable:
            armed.append(True)
            pid = connection.connection.info.backend_pid

            def fire() -> None:
                action(pid)
                ran.append(pid)

            transaction.on_commit(fire)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        yield ran


@contextmanager
def other_connection() -> Iterator:
    other = connections.create_connection("default")
    try:
        yield other
    finally:
        other.close()


@pytest.fixture
def short_lock_timeout():
    with connection.cursor() as cursor:
        cursor.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}'")
    yield
    # A terminated session is gone; any other is reset for the next test.
    connection.close()


def outcomes(request_id: str) -> list[str]:
    """The outcomes of the request's audit events (a bulk writes one event per link)."""
    events = AuditEvent.objects.filter(request_id=request_id)
    return sorted(set(events.values_list("outcome", flat=True)))


def _locker(other) -> Callable[[int], None]:
    def lock(_pid: int) -> None:
        other.set_autocommit(False)
        with other.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {', '.join(READ_BACK_TABLES)} IN ACCESS EXCLUSIVE MODE")

    return lock


def _terminator(other) -> Callable[[int], None]:
    def terminate(pid: int) -> None:
        with other.cursor() as cursor:
            # Waits (up to 5 s) until the backend has exited.
            cursor.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])
            assert cursor.fetchone()[0] is True

    return terminate


def _release(other) -> None:
    if not other.get_autocommit():
        other.rollback()
        other.set_autocommit(True)


def test_a_committed_register_answers_201_though_its_tables_are_locked_after_the_commit(
    world, short_lock_timeout
):
    client = client_for(world.curator)
    with other_connection() as other:
        try:
            with after_the_commit(_locker(other)) as ran:
                response = client.post(
                    "/api/v1/groundings/",
                    register_body(world),
                    format="json",
                    HTTP_X_REQUEST_ID="drill-lock-register",
                )
        finally:
            _release(other)
    assert ran, "the drill never fired"
    assert response.status_code == 201, response.content[:300]
    body = response.json()
    assert response["ETag"] == '"1"'
    assert body["revision"] == 1 and body["record_state"] == "candidate"
    assert GroundingLink.objects.get(pk=body["grounding_id"]).revision == 1
    assert outcomes("drill-lock-register") == ["applied"]


def test_a_committed_bulk_answers_201_though_its_tables_are_locked_after_the_commit(
    world, short_lock_timeout
):
    client = client_for(world.curator)
    items = [register_body(world), register_body(world, external=True)]
    with other_connection() as other:
        try:
            with after_the_commit(_locker(other)) as ran:
                response = client.post(
                    "/api/v1/groundings/bulk/",
                    {"items": items},
                    format="json",
                    HTTP_X_REQUEST_ID="drill-lock-bulk",
                )
        finally:
            _release(other)
    assert ran
    assert response.status_code == 201, response.content[:300]
    written = response.json()["items"]
    assert [item["revision"] for item in written] == [1, 1]
    assert GroundingLink.objects.filter(pk__in=[i["grounding_id"] for i in written]).count() == 2
    assert outcomes("drill-lock-bulk") == ["applied"]
    assert AuditEvent.objects.filter(request_id="drill-lock-bulk").count() == 2


def test_a_committed_patch_answers_200_though_its_tables_are_locked_after_the_commit(
    world, short_lock_timeout
):
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    client = client_for(world.curator)
    with other_connection() as other:
        try:
            with after_the_commit(_locker(other)) as ran:
                response = client.patch(
                    f"/api/v1/groundings/{link.pk}/",
                    {"owner_ref": "urn:team:x", "revision_reason": "handover"},
                    format="json",
                    HTTP_IF_MATCH='"1"',
                    HTTP_X_REQUEST_ID="drill-lock-patch",
                )
        finally:
            _release(other)
    assert ran
    assert response.status_code == 200, response.content[:300]
    assert response["ETag"] == '"2"'
    assert response.json()["revision"] == 2 and response.json()["owner_ref"] == "urn:team:x"
    link.refresh_from_db()
    assert link.revision == 2
    assert outcomes("drill-lock-patch") == ["applied"]


def test_a_committed_register_answers_201_though_its_backend_is_terminated_after_the_commit(
    world, short_lock_timeout
):
    client = client_for(world.curator)
    with other_connection() as other, after_the_commit(_terminator(other)) as ran:
        response = client.post(
            "/api/v1/groundings/",
            register_body(world),
            format="json",
            HTTP_X_REQUEST_ID="drill-kill-register",
        )
    connection.close()  # the terminated session; the next query connects anew
    assert ran
    assert response.status_code == 201, response.content[:300]
    body = response.json()
    assert body["revision"] == 1
    assert GroundingLink.objects.filter(pk=body["grounding_id"]).exists()
    assert outcomes("drill-kill-register") == ["applied"]


def test_a_committed_patch_answers_200_though_its_backend_is_terminated_after_the_commit(
    world, short_lock_timeout
):
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    client = client_for(world.curator)
    with other_connection() as other, after_the_commit(_terminator(other)) as ran:
        response = client.patch(
            f"/api/v1/groundings/{link.pk}/",
            {"owner_ref": "urn:team:y", "revision_reason": "handover"},
            format="json",
            HTTP_IF_MATCH='"1"',
            HTTP_X_REQUEST_ID="drill-kill-patch",
        )
    connection.close()
    assert ran
    assert response.status_code == 200, response.content[:300]
    assert response.json()["revision"] == 2
    link.refresh_from_db()
    assert link.revision == 2
    assert outcomes("drill-kill-patch") == ["applied"]


def test_a_key_committed_with_its_write_replays_after_the_backend_was_terminated(
    world, short_lock_timeout
):
    # The key is stored in the write's transaction: once the write committed, so did
    # the key, and a retry (the client lost the answer) replays it.
    client = client_for(world.curator)
    body = register_body(world)
    with other_connection() as other, after_the_commit(_terminator(other)) as ran:
        first = client.post(
            "/api/v1/groundings/", body, format="json", HTTP_IDEMPOTENCY_KEY="kill-1"
        )
    connection.close()
    assert ran and first.status_code == 201
    again = client.post("/api/v1/groundings/", body, format="json", HTTP_IDEMPOTENCY_KEY="kill-1")
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert GroundingLink.objects.count() == 1
