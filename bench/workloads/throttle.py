"""The throttle's cost per request: the exact counter (common.web.throttling) as DRF
calls it before each view, in queries and microseconds, alone and with threads on
one caller's counter; beside DRF's own throttle over the database cache, which it
replaced (read the window, append, write it back). Redis too when REDIS_URL is set.
"""

from __future__ import annotations

import threading
import time

from bench.workloads.common import env_int, percentile

RATE = "1000000000/min"  # nothing is refused: the cost of counting, not of refusing


def _request(user):
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    request = Request(APIRequestFactory().get("/api/v1/groundings/"))
    request.user = user
    return request


class _View:
    throttle_scope = "read"


def _measure(throttle_factory, request, calls: int) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    view = _View()
    with CaptureQueriesContext(connection) as queries:
        for _ in range(min(calls, 200)):
            assert throttle_factory().allow_request(request, view)
    per_call = []
    for _ in range(calls):
        started = time.perf_counter()
        throttle_factory().allow_request(request, view)
        per_call.append(time.perf_counter() - started)
    return {
        "queries_per_request": round(len(queries.captured_queries) / min(calls, 200), 2),
        "us_per_request": round(sum(per_call) / calls * 1e6, 1),
        "p99_us": round(percentile(per_call, 0.99) * 1e6, 1),
    }


def _contended(throttle_factory, user, threads: int, calls: int) -> dict:
    from django.db import connections

    start = threading.Barrier(threads + 1)

    def run() -> None:
        request, view = _request(user), _View()
        try:
            start.wait()
            for _ in range(calls):
                throttle_factory().allow_request(request, view)
        finally:
            connections.close_all()

    workers = [threading.Thread(target=run) for _ in range(threads)]
    for worker in workers:
        worker.start()
    start.wait()
    began = time.perf_counter()
    for worker in workers:
        worker.join()
    wall = time.perf_counter() - began
    return {"threads": threads, "requests": threads * calls,
            "us_per_request": round(wall / (threads * calls) * 1e6, 1),
            "req_per_s": round(threads * calls / wall)}  # fmt: skip


def _drf_cache_throttle():
    from rest_framework.throttling import SimpleRateThrottle

    class CacheThrottle(SimpleRateThrottle):
        rate = RATE

        def get_cache_key(self, request, view):
            return f"bench-throttle-{request.user.pk}"

    return CacheThrottle


def throttle_cost() -> dict:
    from django.conf import settings
    from django.test.utils import override_settings

    from bench import app
    from common.web.throttling import ScopedUserRateThrottle

    calls = env_int("BENCH_THROTTLE_REQUESTS", 2000)
    threads = env_int("BENCH_THROTTLE_THREADS", 8)
    user = app.curator()
    request = _request(user)
    rest = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"read": RATE}}
    out: dict = {"requests": calls}
    with override_settings(REST_FRAMEWORK=rest, REDIS_URL=""):
        out["counter"] = _measure(ScopedUserRateThrottle, request, calls)
        out["contended"] = _contended(ScopedUserRateThrottle, user, threads, calls // threads)
        if not settings.REDIS_URL:  # the default cache is then the database's
            out["drf_cache_before"] = _measure(_drf_cache_throttle(), request, calls)
    if settings.REDIS_URL:
        with override_settings(REST_FRAMEWORK=rest):
            out["redis"] = _measure(ScopedUserRateThrottle, request, calls)
    return out
