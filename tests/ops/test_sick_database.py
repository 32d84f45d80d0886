"""A hung or refused database fails every request fast with 503 database_unavailable;
/healthz keeps answering and /readyz says 503 within 2 s.

Real parts: gunicorn serving grounding.project.wsgi, a loopback listener that accepts
connections and never answers (the hung database), a closed port (the refused one)
and, for the server-side timeouts, the test run's PostgreSQL.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from django.db import connection

from tests import factories
from tests.conftest import requires_postgres
from tests.ops.live import HungListener, database_url, gunicorn

API = "/api/v1/groundings/"
TOKEN = {"Authorization": "Token " + "0" * 40}
CONNECT_TIMEOUT = 2  # seconds (psycopg's floor); the default is 3


def assert_database_unavailable(response: requests.Response) -> None:
    assert response.status_code == 503, response.text[:500]
    assert response.headers["Content-Type"] == "application/problem+json"
    assert response.headers["Retry-After"] == "5"
    body = response.json()
    assert body["code"] == "database_unavailable"
    assert body["status"] == 503 and body["retry_after"] == 5 and body["offenders"] == []
    assert "127.0.0.1" not in response.text and "timeout" not in response.text.lower()


@pytest.fixture(scope="module")
def hung_server():
    with (
        HungListener() as hung,
        gunicorn(
            hung.url, workers=1, threads=2, DATABASE_CONNECT_TIMEOUT=str(CONNECT_TIMEOUT)
        ) as base,
    ):
        yield base


def timed_get(url: str, **kwargs) -> tuple[requests.Response, float]:
    started = time.monotonic()
    response = requests.get(url, timeout=30, **kwargs)
    return response, time.monotonic() - started


def test_an_api_call_on_a_hung_database_is_503_within_seconds(hung_server):
    response, elapsed = timed_get(hung_server + API, headers=TOKEN)
    assert_database_unavailable(response)
    assert elapsed < CONNECT_TIMEOUT + 3


def test_readyz_is_503_within_2_seconds_on_a_hung_database(hung_server):
    for _ in range(3):  # the second and third find the first check still waiting
        response, elapsed = timed_get(hung_server + "/readyz")
        assert response.status_code == 503
        assert response.json() == {
            "status": "unavailable",
            "checks": {"database": "unavailable", "migrations": "unavailable"},
        }
        assert elapsed < 2.0


def test_healthz_answers_during_and_after_a_burst_of_hung_requests(hung_server):
    # Twelve API calls on one worker with two threads: six rounds of the connect timeout.
    with ThreadPoolExecutor(max_workers=12) as pool:
        calls = [pool.submit(timed_get, hung_server + API, headers=TOKEN) for _ in range(12)]
        time.sleep(0.5)
        during, during_elapsed = timed_get(hung_server + "/healthz")
        results = [call.result() for call in calls]
    assert during.status_code == 200 and during.json() == {"status": "ok"}
    # A deadline, not a speed: with both threads held, /healthz waits for one to be
    # freed by a connect timeout (six rounds), never for the database itself; the
    # margin covers a loaded CI machine.
    assert during_elapsed < 12 * CONNECT_TIMEOUT + 10
    for response, _ in results:
        assert_database_unavailable(response)
    after, after_elapsed = timed_get(hung_server + "/healthz")
    assert after.status_code == 200 and after_elapsed < 1.0


def test_a_page_outside_the_api_is_503_text_on_a_hung_database(hung_server):
    # A session cookie makes the admin read the session table.
    response, elapsed = timed_get(hung_server + "/admin/", cookies={"sessionid": "x" * 32})
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "5"
    assert response.headers["Content-Type"].startswith("text/plain")
    assert "database is not answering" in response.text
    assert elapsed < CONNECT_TIMEOUT + 3


def test_a_refused_database_is_503_at_once():
    # Nothing listens on port 1: the connection is refused.
    with gunicorn("postgres://grounding@127.0.0.1:1/grounding") as base:
        response, elapsed = timed_get(base + API, headers=TOKEN)
        assert_database_unavailable(response)
        assert elapsed < 2.0
        ready, _ = timed_get(base + "/readyz")
        assert ready.status_code == 503


@requires_postgres
@pytest.mark.postgres
def test_connections_carry_the_configured_server_side_timeouts(db):
    with connection.cursor() as cursor:
        shown = {}
        for name in ("statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout"):
            cursor.execute(f"SHOW {name}")
            shown[name] = cursor.fetchone()[0]
    assert shown == {
        "statement_timeout": "30s",
        "lock_timeout": "10s",
        "idle_in_transaction_session_timeout": "1min",
    }
    assert connection.settings_dict["OPTIONS"]["connect_timeout"] == 3


@requires_postgres
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_lock_held_past_the_lock_timeout_is_503_not_a_hang(world, link):

    token = factories.token_for(world.curator)
    with gunicorn(database_url(), DATABASE_LOCK_TIMEOUT="1") as base:
        held, release = threading.Event(), threading.Event()

        def hold_the_row() -> None:
            from django.db import connections, transaction

            try:
                with transaction.atomic():
                    with connections["default"].cursor() as cursor:
                        cursor.execute(
                            "SELECT 1 FROM grounding_groundinglink WHERE grounding_id = %s "
                            "FOR UPDATE",
                            [link.pk],
                        )
                    held.set()
                    release.wait(20)
            finally:
                connections.close_all()

        holder = threading.Thread(target=hold_the_row)
        holder.start()
        try:
            assert held.wait(10)
            started = time.monotonic()
            response = requests.patch(
                f"{base}{API}{link.pk}/",
                json={"owner_ref": "urn:team:x", "revision_reason": "handover"},
                headers={"Authorization": f"Token {token}", "If-Match": '"1"'},
                timeout=30,
            )
            elapsed = time.monotonic() - started
        finally:
            release.set()
            holder.join(timeout=30)
    assert_database_unavailable(response)
    assert elapsed < 5
    link.refresh_from_db()
    assert link.revision == 1
