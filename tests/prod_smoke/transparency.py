"""The transparency log in the production topology: under a steady write load through
nginx, PgBouncer and both app servers, each committed write is covered by a signed
checkpoint (served from the replica) within a second; tools/verify_checkpoint.py
verifies the last checkpoint and a leaf over TLS with hashlib and cryptography only;
manage.py verify_log verifies the whole log on the primary."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

import requests

from tests.prod_smoke.checks import expect
from tests.prod_smoke.observe import register_payload
from tests.prod_smoke.web import PROJECT

WRITES = 40
RATE = 10  # writes a second


def checkpoints_under_load(top, token: str) -> None:
    headers = {"Authorization": f"Token {token}"}
    lags: list[float] = []
    for n in range(WRITES):
        started = time.monotonic()
        answer = requests.post(
            f"{top.base_url()}/api/v1/groundings/",
            json=register_payload(owner_ref=f"role:log-load-{n}"),
            headers=headers,
            verify=top.cert,
            timeout=30,
        )
        expect(answer.status_code == 201, f"register under load: {answer.status_code}")
        committed = time.monotonic()
        proof = (
            f"{top.base_url()}/api/v1/groundings/{answer.json()['grounding_id']}/revisions/1/proof/"
        )
        # 200 once the write's leaf is in a signed checkpoint the server serves.
        while requests.get(proof, headers=headers, verify=top.cert, timeout=10).status_code != 200:
            expect(time.monotonic() - committed < 5, "no checkpoint covered the write in 5 s")
            time.sleep(0.01)
        lags.append(time.monotonic() - committed)
        time.sleep(max(0.0, 1 / RATE - (time.monotonic() - started)))
    p50 = statistics.median(lags)
    p99 = sorted(lags)[max(0, int(len(lags) * 0.99) - 1)]
    print(f"   {WRITES} writes at {RATE}/s: checkpoint lag p50 {p50 * 1000:.0f} ms, "
          f"p99 {p99 * 1000:.0f} ms, max {max(lags) * 1000:.0f} ms")  # fmt: skip
    expect(p99 < 1.0, f"checkpoint lag p99 {p99:.2f} s is over a second")

    key = top.manage("log_signing_key", "--public", env=top.direct_env()).stdout.strip()
    outside = subprocess.run(
        [sys.executable, str(PROJECT / "tools" / "verify_checkpoint.py"),
         "--base", top.base_url(), "--token", token, "--dimension", "demo",
         "--public-key", key, "--cafile", str(top.cert)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    print(f"   tools/verify_checkpoint.py: {outside.stdout.strip()}")
    expect(outside.returncode == 0, f"verify_checkpoint failed: {outside.stdout}{outside.stderr}")
    verified = top.manage("verify_log", "--dimension", "demo", env=top.direct_env())
    print("   verify_log: " + " / ".join(verified.stdout.strip().splitlines()))
    expect(verified.stdout.strip().endswith("OK"), "verify_log did not report OK")
