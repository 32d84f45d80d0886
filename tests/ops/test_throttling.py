"""Throttle counters are shared by every worker and server, keyed on an address the
client cannot choose, and failed authentication is throttled per address.

In-process tests check the rules; the gunicorn tests run two real servers on the
test run's PostgreSQL (ThrottleCounter rows) or on Redis (REDIS_URL), and count one
limit across both. Exactness under concurrency: test_throttling_exact.py.
"""

from __future__ import annotations

import os
import socket
import time
import uuid

import pytest
import requests
from rest_framework.test import APIClient

from common.web.throttling import parse_rate
from policies.models import ThrottleCounter
from tests import factories
from tests.conftest import requires_postgres
from tests.ops.live import database_url, gunicorn

LIST = "/api/v1/groundings/"
WRONG = {"HTTP_AUTHORIZATION": "Token " + "f" * 40}
REDIS_URL = os.environ.get("GROUNDING_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


@pytest.fixture(autouse=True)
def no_leftover_counters(django_db_setup, django_db_blocker):
    """No counter rows of requests made outside any test's transaction (a module-scoped
    fixture's schema fetch commits its anonymous count): each test counts its own."""
    with django_db_blocker.unblock():
        ThrottleCounter.objects.all().delete()


@pytest.fixture
def rates(settings):
    def set_rates(**rates: str) -> None:
        rest = dict(settings.REST_FRAMEWORK)
        rest["DEFAULT_THROTTLE_RATES"] = {"read": "1000/min", "write": "1000/min", **rates}
        settings.REST_FRAMEWORK = rest

    return set_rates


def assert_throttled(status: int, headers, body: dict) -> None:
    assert status == 429
    assert headers["Content-Type"] == "application/problem+json"
    assert 0 < int(headers["Retry-After"]) <= 60
    assert body["code"] == "throttled" and body["retry_after"] == int(headers["Retry-After"])


@pytest.mark.django_db
def test_wrong_tokens_are_throttled_per_address_whatever_x_forwarded_for_says(rates):
    rates(auth_failure="3/min")
    client = APIClient()
    statuses = [
        client.get(LIST, HTTP_X_FORWARDED_FOR=f"203.0.113.{n}", **WRONG).status_code
        for n in range(3)
    ]
    assert statuses == [401, 401, 401]
    response = client.get(LIST, HTTP_X_FORWARDED_FOR="198.51.100.9", **WRONG)
    assert_throttled(response.status_code, response, response.json())
    # Another address still gets its own failures.
    assert client.get(LIST, REMOTE_ADDR="192.0.2.7", **WRONG).status_code == 401


@pytest.mark.django_db
def test_a_valid_token_is_not_locked_out_by_failures_from_its_address(rates, world):
    rates(auth_failure="2/min")
    client = APIClient()
    for _ in range(3):
        client.get(LIST, **WRONG)
    assert client.get(LIST, **WRONG).status_code == 429
    token = factories.token_for(world.curator)
    assert client.get(LIST, HTTP_AUTHORIZATION=f"Token {token}").status_code == 200


@pytest.mark.django_db
def test_behind_one_trusted_proxy_the_address_is_the_one_that_proxy_saw(rates, settings):
    rates(auth_failure="2/min")
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    client = APIClient()
    # The client prepends made-up hops; the proxy appends the address it saw.
    for forged in ("10.0.0.1", "10.0.0.2"):
        response = client.get(LIST, HTTP_X_FORWARDED_FOR=f"{forged}, 203.0.113.5", **WRONG)
        assert response.status_code == 401
    response = client.get(LIST, HTTP_X_FORWARDED_FOR="10.0.0.3, 203.0.113.5", **WRONG)
    assert response.status_code == 429
    response = client.get(LIST, HTTP_X_FORWARDED_FOR="203.0.113.6", **WRONG)
    assert response.status_code == 401


@pytest.mark.django_db
def test_counters_are_rows_per_caller_scope_and_window(rates, world):
    rates(read="1/min")
    client = APIClient()
    client.force_authenticate(world.curator)
    if time.time() % 60 > 55:  # both requests in one minute window
        time.sleep(60.5 - time.time() % 60)
    window_end = (int(time.time()) // 60 + 1) * 60
    assert client.get(LIST).status_code == 200
    response = client.get(LIST)
    assert_throttled(response.status_code, response, response.json())
    rows = list(ThrottleCounter.objects.values_list("ident", "scope", "count", "window_end"))
    assert rows == [(f"user:{world.curator.pk}", "read", 2, window_end)]


@pytest.mark.django_db
def test_a_rate_period_may_carry_a_multiple():
    assert parse_rate("300/min") == (300, 60)
    assert parse_rate("10/5s") == (10, 5)
    assert parse_rate("20/15m") == (20, 900)
    assert parse_rate("1000/hour") == (1000, 3600)
    assert parse_rate("5/day") == (5, 86400)
    with pytest.raises(ValueError, match="not a throttle rate"):
        parse_rate("5/fortnight")


@pytest.mark.django_db
def test_a_failed_authentication_is_counted_in_the_same_counter(rates):
    rates(auth_failure="2/min")
    client = APIClient()
    assert client.get(LIST, REMOTE_ADDR="192.0.2.44", **WRONG).status_code == 401
    row = ThrottleCounter.objects.get()
    assert (row.ident, row.scope, row.count) == ("ip:192.0.2.44", "auth_failure", 1)


# -- two real servers, one limit


def _one_limit_across_two_servers(world, **server_env: str) -> str:
    token = factories.token_for(world.curator)
    env = {
        "GROUNDING_THROTTLE_RATES": "read=6/min,auth_failure=4/min",
        "GROUNDING_CACHE_KEY_PREFIX": f"test-{uuid.uuid4().hex}",
        **server_env,
    }
    # Ten reads and seven failures within one minute window.
    if time.time() % 60 > 45:
        time.sleep(61 - time.time() % 60)
    with gunicorn(database_url(), **env) as first, gunicorn(database_url(), **env) as second:
        servers = [first, second]

        def get(n: int, key: str) -> requests.Response:
            headers = {"Authorization": f"Token {key}"}
            return requests.get(servers[n % 2] + LIST, headers=headers, timeout=30)

        reads = [get(n, token) for n in range(10)]
        failures = [get(n, "f" * 40) for n in range(7)]
    assert [r.status_code for r in reads] == [200] * 6 + [429] * 4
    for response in reads[6:] + failures[4:]:
        assert_throttled(response.status_code, response.headers, response.json())
    assert [r.status_code for r in failures] == [401] * 4 + [429] * 3
    return env["GROUNDING_CACHE_KEY_PREFIX"]


@requires_postgres
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_gunicorn_servers_share_one_limit_in_postgresql(world):
    _one_limit_across_two_servers(world)
    rows = ThrottleCounter.objects.order_by("scope").values_list("ident", "scope", "count")
    assert list(rows) == [
        ("ip:127.0.0.1", "auth_failure", 7),
        (f"user:{world.curator.pk}", "read", 10),
    ]


def _redis_reachable() -> bool:
    host, port = REDIS_URL.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=1):
            return True
    except OSError:
        return False


@requires_postgres
@pytest.mark.postgres
@pytest.mark.skipif(not _redis_reachable(), reason=f"no Redis answers at {REDIS_URL}")
@pytest.mark.django_db(transaction=True)
def test_two_gunicorn_servers_share_one_limit_in_redis(world):
    import redis

    prefix = _one_limit_across_two_servers(world, REDIS_URL=REDIS_URL)
    store = redis.Redis.from_url(REDIS_URL)
    keys = sorted(store.keys(f"{prefix}:*"))
    assert [int(store.get(k)) for k in keys] == [7, 10]  # auth_failure, then read
    assert all(0 < store.ttl(k) <= 120 for k in keys)
    store.delete(*keys)
    assert ThrottleCounter.objects.count() == 0
