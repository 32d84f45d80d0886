"""The soak's clients: every request and its retries recorded as plain data.

Each logical operation is an `Op`; each time it is sent is an `Attempt` with its own
`X-Request-ID` (so the audit rows of that very attempt can be found). A write carries
one `Idempotency-Key` over all its attempts and is sent again, with the same body, on
a connection error, a 5xx, a 429 or `409 idempotency_in_progress`, until it gets
another answer or runs out of attempts; a read is simply sent again.
"""

from __future__ import annotations

import copy
import itertools
import random
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import requests

from tests.prod_smoke.observe import register_payload

MAX_ATTEMPTS = 40
_ops = itertools.count(1)


@dataclass
class Attempt:
    request_id: str
    status: int  # 0: no answer (connection refused, reset or timed out)
    replayed: bool = False
    code: str = ""
    server: str = ""
    error: str = ""
    # time.monotonic() when sent and when answered (or given up): a drill's windows.
    sent_at: float = 0.0
    answered_at: float = 0.0


@dataclass
class Op:
    """One logical operation of a client."""

    phase: str
    kind: str  # register | bulk | patch | assess | read | list | race | throttle
    key: str | None
    owner_ref: str = ""  # the marker the op's links carry (register and bulk)
    items: int = 0  # links a register or bulk writes
    grounding_id: str = ""  # the link a patch or an assessment changes
    expected_revision: int = 0  # its If-Match
    attempts: list[Attempt] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)  # the links of the final 2xx answer
    revision: int = 0  # the final answer's revision (ETag)

    @property
    def final(self) -> Attempt | None:
        return self.attempts[-1] if self.attempts else None

    @property
    def status(self) -> int:
        return self.final.status if self.final else 0

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class Recorder:
    """Every op of a run, from every client thread."""

    def __init__(self) -> None:
        self.ops: list[Op] = []
        self._lock = threading.Lock()

    def add(self, op: Op) -> Op:
        with self._lock:
            self.ops.append(op)
        return op

    def of(self, phase: str) -> list[Op]:
        with self._lock:
            return [op for op in self.ops if op.phase == phase]


def new_key(phase: str) -> str:
    return f"soak-{phase}-{next(_ops)}-{uuid.uuid4().hex[:8]}"


def link_payload(owner_ref: str) -> dict:
    payload = register_payload(owner_ref)
    # A soak link names its op in the statement too: readable in a failure's output.
    payload["statement"]["statement_ref"] = f"urn:soak:{owner_ref[5:]}:{uuid.uuid4().hex[:8]}#s1"
    return payload


def bulk_payload(owner_ref: str, count: int) -> dict:
    return {"items": [link_payload(owner_ref) for _ in range(count)]}


def assessment_payload(revision: int) -> dict:
    return {
        "assessment_ref": f"urn:eval:soak-{uuid.uuid4().hex[:12]}",
        "reviewer_ref": "urn:reviewer:soak",
        "reviewer_kind": "automated",
        "authority_ref": "urn:policy:review@1",
        "method_ref": "urn:method:nli@2",
        "verdict": random.choice(["supporting", "partial", "cannot_assess"]),
        "assessed_inputs": {"grounding_revision": revision},
        "assessed_at": "2026-11-30T12:05:00Z",
    }


def patch_payload(n: int) -> dict:
    support = copy.deepcopy(register_payload()["support"])
    support["support_scope"] = {"covers": f"soak revision {n}"}
    return {"support": support, "revision_reason": f"soak revision {n}"}


def worth_retrying(attempt: Attempt, is_write: bool, keyed: bool) -> bool:
    """A read is always sent again; a write only with a key (the replay makes it safe)."""
    if attempt.status == 0 or attempt.status >= 500 or attempt.status == 429:
        return keyed or not is_write
    return attempt.status == 409 and attempt.code == "idempotency_in_progress"


class Client:
    """One thread's HTTP client over both app servers, as one caller (a token)."""

    def __init__(
        self, urls: list[str], token: str, recorder: Recorder, verify: str | None = None
    ) -> None:
        self.urls = urls
        self.recorder = recorder
        # A CA file for HTTPS (per request: a session's own loses to REQUESTS_CA_BUNDLE).
        self.verify: str | bool = verify or True
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"
        # Straight to gunicorn: the header a TLS-terminating proxy would set.
        self.session.headers["X-Forwarded-Proto"] = "https"
        self._turn = itertools.cycle(random.sample(range(len(urls)), len(urls)))

    def send(
        self,
        op: Op,
        method: str,
        path: str,
        *,
        json: dict | None = None,
        headers: dict[str, str] | None = None,
        retry: bool = True,
    ) -> requests.Response | None:
        """Send `op` until it gets an answer not worth retrying; the last response."""
        self.recorder.add(op)
        is_write = method != "GET"
        sent = dict(headers or {})
        if op.key:
            sent["Idempotency-Key"] = op.key
        response = None
        for n in range(MAX_ATTEMPTS if retry else 1):
            attempt = Attempt(
                request_id=f"soak-{uuid.uuid4().hex}", status=0, sent_at=time.monotonic()
            )
            base = self.urls[next(self._turn)]
            try:
                response = self.session.request(
                    method,
                    base + path,
                    json=json,
                    headers={**sent, "X-Request-ID": attempt.request_id},
                    timeout=30,
                    allow_redirects=False,
                    verify=self.verify,
                )
            except requests.RequestException as error:
                response = None
                attempt.error = type(error).__name__
            attempt.answered_at = time.monotonic()
            if response is not None:
                attempt.status = response.status_code
                attempt.server = response.headers.get("X-Served-By", "")
                attempt.replayed = response.headers.get("Idempotent-Replayed") == "true"
                if response.headers.get("Content-Type", "").startswith("application/problem"):
                    attempt.code = _code(response)
            op.attempts.append(attempt)
            if not worth_retrying(attempt, is_write, op.key is not None):
                break
            time.sleep(min(0.05 * (n + 1), 0.5) * random.uniform(0.5, 1.5))
        if response is not None and 200 <= response.status_code < 300:
            _note_answer(op, response)
        return response


def _code(response: requests.Response) -> str:
    try:
        return str(response.json().get("code", ""))
    except ValueError:
        return ""


def _note_answer(op: Op, response: requests.Response) -> None:
    try:
        body = response.json()
    except ValueError:
        return
    if op.kind == "bulk":
        op.ids = [item["grounding_id"] for item in body.get("items", [])]
    elif isinstance(body, dict) and "grounding_id" in body:
        op.ids = [body["grounding_id"]]
    etag = response.headers.get("ETag", "").strip('"')
    if etag.isdigit():
        op.revision = int(etag)
    elif isinstance(body, dict) and isinstance(body.get("revision"), int):
        op.revision = body["revision"]


def statuses(ops: list[Op]) -> dict[int, int]:
    """Every attempt's status, by count (0: no answer)."""
    counted: dict[int, int] = {}
    for attempt in all_attempts(ops):
        counted[attempt.status] = counted.get(attempt.status, 0) + 1
    return dict(sorted(counted.items()))


def all_attempts(ops: list[Op]) -> Iterator[Attempt]:
    for op in ops:
        yield from op.attempts
