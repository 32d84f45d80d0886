"""Throttles count exactly under concurrency (API.md "Retries and idempotency"): within
one window at most the limit is accepted for a caller and scope, across every worker
and server; the rest are 429 with Retry-After; the next window accepts again.

The counter itself is hammered by threads (PostgreSQL, Redis when one answers at
127.0.0.1:6379); the API by concurrent clients across two gunicorn servers. SQLite
has one writer: its counts are checked in sequence.
"""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from django.db import connection, connections

from common.web import throttling
from common.web.throttling import count_request
from policies.models import ThrottleCounter
from tests import factories
from tests.conftest import requires_postgres
from tests.ops.live import database_url, gunicorn
from tests.ops.test_throttling import (  # noqa: F401  (an autouse fixture)
    REDIS_URL,
    _redis_reachable,
    no_leftover_counters,
)

LIST = "/api/v1/groundings/"
requires_redis = pytest.mark.skipif(
    not _redis_reachable(), reason=f"no Redis answers at {REDIS_URL}: the Redis variant is skipped"
)


def hammer(ident: str, *, threads: int, each: int, period: int, now: float) -> list[int]:
    """Every count `threads` threads got back, `each` increments apiece, all released
    at once; each thread uses (and closes) its own database connection."""
    start = threading.Barrier(threads)
    counts: list[int] = []
    lock = threading.Lock()

    def run() -> None:
        try:
            start.wait()
            got = [count_request(ident, "write", period, now=now).count for _ in range(each)]
            with lock:
                counts.extend(got)
        finally:
            connections.close_all()

    workers = [threading.Thread(target=run) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    return counts


# -- the counter


@requires_postgres
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_increments_on_postgresql_count_every_request_once():
    now = time.time()
    counts = hammer("user:hammered", threads=16, each=25, period=60, now=now)
    # 400 increments: each got a different count, none was lost.
    assert sorted(counts) == list(range(1, 401))
    assert sum(count <= 300 for count in counts) == 300  # write=300/min accepts 300
    row = ThrottleCounter.objects.get(ident="user:hammered")
    assert (row.scope, row.count, row.window_end) == ("write", 400, (int(now) // 60 + 1) * 60)


@requires_redis
@pytest.mark.django_db
def test_concurrent_increments_in_redis_count_every_request_once(settings):
    import redis

    settings.REDIS_URL = REDIS_URL
    ident = f"user:{uuid.uuid4().hex}"
    now = time.time()
    try:
        counts = hammer(ident, threads=16, each=25, period=60, now=now)
        assert sorted(counts) == list(range(1, 401))
        key = throttling.redis_key(ident, "write", (int(now) // 60 + 1) * 60)
        store = redis.Redis.from_url(REDIS_URL)
        assert int(store.get(key)) == 400
        assert 60 < store.ttl(key) <= 120  # two periods: outlives its window
    finally:
        redis.Redis.from_url(REDIS_URL).delete(
            throttling.redis_key(ident, "write", (int(now) // 60 + 1) * 60)
        )
    assert ThrottleCounter.objects.count() == 0  # Redis configured: no rows


@pytest.mark.django_db
def test_sequential_counts_are_exact_and_a_new_window_starts_at_one():
    now = 1_700_000_000.0  # 20 s into a minute
    counts = [count_request("ip:192.0.2.1", "read", 60, now=now).count for _ in range(5)]
    assert counts == [1, 2, 3, 4, 5]
    nxt = count_request("ip:192.0.2.1", "read", 60, now=now + 40)
    assert (nxt.count, nxt.window_end) == (1, 1_700_000_040 + 60)
    # Another scope and another caller have counters of their own.
    assert count_request("ip:192.0.2.1", "write", 60, now=now).count == 1
    assert count_request("ip:192.0.2.2", "read", 60, now=now).count == 1


@pytest.mark.django_db
def test_retry_after_is_the_whole_seconds_to_the_windows_end():
    counted = count_request("ip:192.0.2.3", "read", 60, now=1_700_000_000.4)
    assert counted.window_end == 1_700_000_040
    assert counted.retry_after == 40  # 39.6 s rounded up
    assert count_request("ip:192.0.2.3", "read", 60, now=1_700_000_039.99).retry_after == 1
    # Windows are aligned on the period: 10/5s windows end on multiples of 5 s.
    assert count_request("ip:192.0.2.3", "read", 5, now=1_700_000_002.0).window_end == (
        1_700_000_005
    )


@pytest.mark.django_db
def test_ended_windows_are_swept_by_the_increment():
    old = time.time() - 3600
    count_request("ip:192.0.2.4", "read", 60, now=old)
    count_request("ip:192.0.2.5", "write", 60, now=old)
    throttling._last_sweep.clear()  # this process has not swept yet: the next one does
    count_request("ip:192.0.2.4", "read", 60)
    assert list(ThrottleCounter.objects.values_list("ident", "count")) == [("ip:192.0.2.4", 1)]
    # Not due again for a minute: an ended window stays until then.
    count_request("ip:192.0.2.6", "read", 60, now=old)
    count_request("ip:192.0.2.4", "read", 60)
    assert ThrottleCounter.objects.count() == 2


@pytest.mark.django_db
def test_the_update_then_insert_fallback_counts_as_the_upsert():
    table = connection.ops.quote_name(ThrottleCounter._meta.db_table)
    params = ["ip:192.0.2.7", "read", 1_700_000_040]
    with connection.cursor() as cursor:
        got = [throttling._update_or_insert(cursor, table, params) for _ in range(3)]
    assert got == [1, 2, 3]
    assert ThrottleCounter.objects.get(ident="ip:192.0.2.7").count == 3


@pytest.mark.django_db
def test_a_long_proxy_given_address_is_counted_under_its_digest():
    counted = count_request("ip:" + "x" * 200, "read", 60)
    row = ThrottleCounter.objects.get()
    assert counted.count == 1 and row.ident.startswith("sha256:") and len(row.ident) == 64


# -- two servers, concurrent clients


LIMIT, PERIOD, CLIENTS = 10, 10, 30


def _start_of_next_window() -> None:
    time.sleep(PERIOD - time.time() % PERIOD + 0.2)


def _burst(servers: list[str], token: str) -> tuple[list[requests.Response], float]:
    """CLIENTS concurrent GETs, alternating between the servers, released together
    just after a window starts; the answers and the seconds the burst took."""
    start = threading.Barrier(CLIENTS)
    session_headers = {"Authorization": f"Token {token}"}

    def get(n: int) -> requests.Response:
        start.wait()
        return requests.get(servers[n % 2] + LIST, headers=session_headers, timeout=30)

    _start_of_next_window()
    began = time.time()
    with ThreadPoolExecutor(CLIENTS) as pool:
        answers = list(pool.map(get, range(CLIENTS)))
    return answers, time.time() - began


def _assert_exactly_the_limit_accepted(answers: list[requests.Response], took: float) -> None:
    assert took < PERIOD - 1, f"the burst took {took:.1f} s: not within one window"
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200] * LIMIT + [429] * (CLIENTS - LIMIT)
    for answer in answers:
        if answer.status_code == 429:
            assert answer.headers["Content-Type"] == "application/problem+json"
            assert 1 <= int(answer.headers["Retry-After"]) <= PERIOD
            assert answer.json()["code"] == "throttled"


@requires_postgres
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_clients_across_two_servers_get_exactly_the_limit_per_window(world):
    token = factories.token_for(world.curator)
    env = {"GROUNDING_THROTTLE_RATES": f"read={LIMIT}/{PERIOD}s"}
    with (
        gunicorn(database_url(), workers=2, threads=8, **env) as first,
        gunicorn(database_url(), workers=2, threads=8, **env) as second,
    ):
        servers = [first, second]
        for _ in range(2):  # this window, then the next one accepts again
            answers, took = _burst(servers, token)
            _assert_exactly_the_limit_accepted(answers, took)
    rows = ThrottleCounter.objects.filter(scope="read").order_by("window_end")
    ends = [row.window_end for row in rows]
    assert [row.count for row in rows] == [CLIENTS, CLIENTS]
    assert ends[1] - ends[0] == PERIOD and ends[0] % PERIOD == 0


@requires_postgres
@pytest.mark.postgres
@pytest.mark.django_db
def test_the_counter_table_is_unlogged_on_postgresql():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relpersistence FROM pg_class WHERE relname = %s",
            [ThrottleCounter._meta.db_table],
        )
        assert cursor.fetchone() == ("u",)  # a counted request waits for no WAL flush


def test_the_bench_reports_the_throttles_queries_and_microseconds_per_request():
    from bench import report

    results = {
        "run_id": "r",
        "throttle": {"run_id": "r", "requests": 2000,
                     "counter": {"queries_per_request": 1.0, "us_per_request": 513.1},
                     "contended": {"threads": 8, "us_per_request": 260.3},
                     "drf_cache_before": {"queries_per_request": 6.0, "us_per_request": 6589.4}},
    }  # fmt: skip
    _, absolute = report.rows(results)
    assert {row[0]: row[1:] for row in absolute} == {
        "throttle before a view: queries per request": ("1", "—", "—", "≤ 1", "yes"),
        "throttle before a view: µs per request": ("513 µs", "—", "—", "", ""),
        "throttle, 8 threads on one caller: µs per request": ("260 µs", "—", "—", "", ""),
        "DRF's throttle over the database cache (replaced): queries per request": (
            "6", "—", "—", "", "",
        ),
        "DRF's throttle over the database cache (replaced): µs per request": (
            "6,589 µs", "—", "—", "", "",
        ),
    }  # fmt: skip
