"""What the smoke reads back: who answered a request, which database ran its queries."""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass

import requests

from tests.prod_smoke.procs import SmokeFailure
from tests.prod_smoke.topology import SERVERS, Topology

_seq = itertools.count(1)

# Only the app servers' connections: they name themselves with application_name, and
# through PgBouncer the server connection carries the client's name.
_ACTIVITY = (
    "SELECT pid, application_name, query_start, left(regexp_replace(query, '\\s+', ' ', 'g'),"
    " 90) FROM pg_stat_activity WHERE backend_type = 'client backend' AND datname = %s"
    " AND application_name = ANY(%s) AND query_start IS NOT NULL"
)


@dataclass
class Answer:
    status: int
    served_by: str
    upstream: str
    headers: requests.structures.CaseInsensitiveDict
    body: object
    databases: dict[str, list[tuple[str, str]]]

    def db_line(self) -> str:
        parts = []
        for side in ("primary", "replica"):
            seen = self.databases.get(side, [])
            names = sorted({name for name, _ in seen})
            parts.append(f"{side}: {len(seen)} backend(s) {','.join(names) or '-'}")
        return "; ".join(parts)


class Watch:
    """Snapshots of pg_stat_activity on the primary and the replica; the backends whose
    last query started between two snapshots are the ones a request used."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.connections = {side: topology.connect(side) for side in ("primary", "replica")}

    def snapshot(self) -> dict[str, dict[int, tuple]]:
        taken = {}
        for side, conn in self.connections.items():
            rows = conn.execute(_ACTIVITY, ("grounding", list(SERVERS))).fetchall()
            taken[side] = {row[0]: row[1:] for row in rows}
        return taken

    @staticmethod
    def used(before: dict, after: dict) -> dict[str, list[tuple[str, str]]]:
        used = {}
        for side, rows in after.items():
            used[side] = [
                (name, query)
                for pid, (name, started, query) in rows.items()
                if before[side].get(pid, (None, None))[1] != started
            ]
        return used

    def close(self) -> None:
        for conn in self.connections.values():
            conn.close()


class Client:
    """HTTPS through nginx, verifying its certificate, with a demo role's token."""

    def __init__(self, topology: Topology, token: str, watch: Watch | None = None) -> None:
        self.topology = topology
        self.session = requests.Session()
        # Per request: a session's `verify` loses to REQUESTS_CA_BUNDLE in the environment.
        self.verify = str(topology.cert)
        self.session.headers["Authorization"] = f"Token {token}"
        self.watch = watch

    def call(self, method: str, path: str, *, expect: int | None = None, **kwargs) -> Answer:
        before = self.watch.snapshot() if self.watch else None
        response = self.session.request(
            method,
            self.topology.base_url() + path,
            timeout=30,
            allow_redirects=False,
            verify=self.verify,
            **kwargs,
        )
        used = self.watch.used(before, self.watch.snapshot()) if self.watch else {}
        try:
            body = response.json()
        except ValueError:
            body = response.text
        answer = Answer(
            response.status_code,
            response.headers.get("X-Served-By", "?"),
            response.headers.get("X-Upstream", "?"),
            response.headers,
            body,
            used,
        )
        if expect is not None and answer.status != expect:
            raise SmokeFailure(f"{method} {path}: {answer.status}, expected {expect}: {body}")
        return answer


def show(label: str, answer: Answer, *, databases: bool = True) -> None:
    line = f"   {label:<44} {answer.status}  served-by={answer.served_by} via {answer.upstream}"
    if databases:
        line += f"  [{answer.db_line()}]"
    print(line, flush=True)


BASE_PAYLOAD = {
    "dimension": "demo",
    "profile": "wm-mem-016@1.0.0",
    "owner_ref": "role:grounding-curator",
    "statement": {
        "statement_ref": "urn:answer:smoke#s1",
        "answer_revision_ref": "urn:answer:smoke@1",
        "answer_selector": {"type": "TextPositionSelector", "start": 10, "end": 58},
        "answer_representation": {"language": "en", "media_type": "text/plain"},
        "claim_scope": {"proposition": "The bridge opened in 1932."},
        "rebind_requirement": "none",
    },
    "passage": {},
    "anchor": {
        "source_selector": {
            "type": "TextQuoteSelector",
            "exact": "opened in 1932",
            "prefix": "The bridge ",
            "suffix": ".",
        },
        "selector_profile": "nfc-codepoint-halfopen@1",
    },
    "support": {
        "support_kind": "quotation",
        "support_scope": {"covers": "opening year"},
        "use_basis": "post_generation",
    },
    "time": {"asserted_at": "2026-11-30T12:00:00Z", "time_uncertainty": {"asserted_at": "second"}},
}


def register_payload(owner_ref: str = "role:grounding-curator") -> dict:
    n = next(_seq)
    payload = copy.deepcopy(BASE_PAYLOAD)
    payload["owner_ref"] = owner_ref
    payload["statement"]["statement_ref"] = f"urn:answer:smoke-{n}#s1"
    payload["passage"] = {
        "passage_ref": f"urn:smoke:passage:{n}",
        "source_revision_binding": {
            "source_ref": "https://example.org/bridge",
            "revision": "etag:abc",
            "media_type": "text/html",
            "language": "en",
        },
    }
    return payload
