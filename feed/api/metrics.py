"""GET /metrics for Prometheus, and the middleware timing every request by route.

Not public unless the operator says so (GROUNDING_METRICS_PUBLIC=1): otherwise a
scraper sends `Authorization: Bearer <GROUNDING_METRICS_TOKEN>`, or an operator
(superuser) reads it signed in. Anyone else gets a problem (401 or 403).
"""

from __future__ import annotations

import hmac
import os
import time

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    generate_latest,
    multiprocess,
)

from common.web.errors import PROBLEM_CONTENT_TYPE, problem
from feed.metrics import REQUEST_SECONDS, RegistryCollector


def _allowed(request: HttpRequest) -> int:
    """0 when the caller may read the metrics, else the refusal's status."""
    if settings.GROUNDING_METRICS_PUBLIC:
        return 0
    token = settings.GROUNDING_METRICS_TOKEN
    header = request.headers.get("Authorization", "")
    if (
        token
        and header.startswith("Bearer ")
        and hmac.compare_digest(header.removeprefix("Bearer ").encode(), token.encode())
    ):
        return 0
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return 0 if user.is_superuser else 403
    return 401


def metrics(request: HttpRequest) -> HttpResponse:
    refused = _allowed(request)
    if refused:
        code = "operator_required" if refused == 403 else "not_authenticated"
        detail = (
            "metrics are read by operators or a scraper holding the metrics token."
            if refused == 403
            else "send Authorization: Bearer <metrics token>, or sign in as an operator."
        )
        return JsonResponse(
            problem(code, refused, detail), status=refused, content_type=PROBLEM_CONTENT_TYPE
        )
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # Several worker processes: their samples, summed (prometheus-client's files).
        processes = CollectorRegistry()
        multiprocess.MultiProcessCollector(processes)
    else:
        processes = REGISTRY
    body = generate_latest(processes) + generate_latest(_DATABASE)
    response = HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response


# The database's figures: the same whichever process is scraped.
_DATABASE = CollectorRegistry(auto_describe=False)
_DATABASE.register(RegistryCollector())


class RequestTimingMiddleware:
    """Observe each request's time under its route pattern (never its path: ids would
    make a series per resource)."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = match.route if match is not None else "unmatched"
        REQUEST_SECONDS.labels(route, request.method, f"{response.status_code // 100}xx").observe(
            time.perf_counter() - started
        )
        return response
