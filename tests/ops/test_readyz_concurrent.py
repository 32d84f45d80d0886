"""Probes that arrive together all get the checks' answer: an orchestrator's and a
load balancer's probes at once must not make a healthy server look unready to one of
them (the HA drill saw a 503 from its own second, concurrent probe). One gunicorn
worker with many threads, so the probes share one process's running check."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import requests

from tests.ops.live import gunicorn, sqlite_database_with_token

PROBES = 12
ROUNDS = 5


def _probe(base: str, start: threading.Barrier) -> tuple[int, dict]:
    start.wait(timeout=30)
    response = requests.get(f"{base}/readyz", timeout=30)
    return response.status_code, response.json()


def test_concurrent_probes_all_get_the_same_ready_answer(tmp_path):
    database, _token = sqlite_database_with_token(tmp_path)
    with gunicorn(database, workers=1, threads=PROBES) as base:
        answers = []
        for _ in range(ROUNDS):
            start = threading.Barrier(PROBES)
            with ThreadPoolExecutor(PROBES) as pool:
                answers.extend(pool.map(_probe, [base] * PROBES, [start] * PROBES))
    ready = (200, {"status": "ok", "checks": {"database": "ok", "migrations": "ok"}})
    assert [answer for answer in answers if answer != ready] == []
    assert len(answers) == PROBES * ROUNDS
