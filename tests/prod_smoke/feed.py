"""The event feed in the production topology: a real receiver, `deliver_events` and
the log's sequencer as services, writes through nginx, and, end to end, every event
of the stream delivered to the receiver with a valid Standard Webhooks signature;
the stream under uvicorn (ASGI) as well."""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests
from standardwebhooks.webhooks import Webhook as Verifier

from tests.prod_smoke.checks import expect, register_payload
from tests.prod_smoke.observe import Client
from tests.prod_smoke.procs import SmokeFailure, free_ports, wait_until
from tests.prod_smoke.topology import Topology
from tests.prod_smoke.web import PROJECT


class Receiver:
    """A threaded http.server on loopback recording every delivery; with `journal`,
    each also as a line of JSON in that file before it is answered (a receiver run as
    a service of its own, tests/ha_drill/receiver.py)."""

    def __init__(self, port: int = 0, journal: Path | None = None) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                headers = dict(self.headers.items())
                with lock:
                    outer.received.append((headers, body))
                    if journal is not None:
                        line = {"at": time.time(), "headers": headers, "body": body.decode()}
                        with journal.open("a", encoding="utf-8") as handle:
                            handle.write(json.dumps(line) + "\n")
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _state(top: Topology) -> dict:
    """What the feed's tables hold on the primary and the replica (a failure's report)."""
    found = {}
    for side in ("primary", "replica"):
        with top.connect(side) as conn:
            found[side] = conn.execute(
                "SELECT (SELECT count(*) FROM feed_event), (SELECT max(id) FROM feed_event), "
                "(SELECT count(*) FROM transparency_pendingwrite), "
                "(SELECT max(index) FROM transparency_leaf), "
                "(SELECT string_agg(state || ':' || n, ',') FROM (SELECT state, count(*) n "
                "FROM feed_delivery GROUP BY state) d)"
            ).fetchone()
    return found


def start_services(top: Topology) -> None:
    """Two delivery workers, as docker-compose runs them (the log's sequencer is
    already running: Topology.start_sequencer)."""
    for name, args in (
        ("deliver-1", ["deliver_events", "--threads", "2", "--poll", "0.2"]),
        ("deliver-2", ["deliver_events", "--threads", "2", "--poll", "0.2"]),
    ):
        top.services[name] = top.supervisor.start(
            name, [sys.executable, "manage.py", *args], env=top.app_env(name), cwd=PROJECT
        )


def _stream_after(member: Client, cursor: str | None) -> tuple[list[dict], str | None]:
    events: list[dict] = []
    while True:
        query = "/api/v1/events/?dimension=demo&limit=500" + (f"&after={cursor}" if cursor else "")
        page = member.call("GET", query, expect=200).body
        events += page["events"]
        if not page["events"]:
            return events, cursor
        cursor = page["next"]


def webhooks_end_to_end(top: Topology, tokens: dict[str, str]) -> None:
    steward = Client(top, tokens["steward"])
    curator = Client(top, tokens["curator"])
    access = Client(top, tokens["access_steward"])
    receiver = Receiver()
    try:
        # The writes of the earlier steps were queued before the sequencer started:
        # the stream's position at subscription is taken once they are in the log
        # (and on the replica, which serves the stream's reads).
        def integrated() -> bool:
            state = _state(top)
            return state["primary"][2] == 0 and state["primary"][3] == state["replica"][3]

        wait_until("the log integrated the earlier writes", integrated, timeout=60)
        _, start = _stream_after(curator, None)
        created = steward.call("POST", "/api/v1/webhooks/", expect=201,
                               json={"dimension": "demo", "url": receiver.url}).body  # fmt: skip
        print(f"   subscribed {receiver.url}: secret {created['secret'][:10]}… shown once")
        links = [curator.call("POST", "/api/v1/groundings/", json=register_payload(),
                              expect=201).body for _ in range(5)]  # fmt: skip
        access.call("POST", f"/api/v1/groundings/{links[0]['grounding_id']}/disposal/",
                    json={"receipt_ref": "urn:receipt:smoke", "policy_ref": "urn:policy:r"},
                    headers={"If-Match": '"1"'}, expect=201)  # fmt: skip
        events: list[dict] = []

        def complete():
            events[:] = _stream_after(curator, start)[0]
            ids = {json.loads(body)["id"] for _, body in receiver.received}
            return len(events) >= 6 and {e["id"] for e in events} <= ids

        try:
            wait_until("every event of the stream at the receiver", complete, timeout=60)
        except SmokeFailure:
            print(f"   outbox and log on each side: {_state(top)}")
            raise
        verifier = Verifier(created["secret"])
        for headers, body in receiver.received:
            verifier.verify(body, headers)  # raises on a bad signature
        delivered = [json.loads(body) for _, body in receiver.received]
        expect(len({d["id"] for d in delivered}) == len(events),
               "the receiver got events the stream does not have")  # fmt: skip
        disposal = next(d for d in delivered if d["type"] == "org.grounding.link.disposed")
        states = {"grounding_id", "revision", "record_state", "recheck_state", "display_state"}
        expect(
            set(disposal["data"]) == states,
            f"the disposal event carries more than ids and states: {disposal['data']}",
        )
        indexes = [e["logindex"] for e in events]
        expect(indexes == sorted(indexes), "the stream is not in log order")
        print(f"   {len(events)} events in the stream after subscribing, {len(receiver.received)} "
              f"deliveries, every signature valid (standardwebhooks), logindex "
              f"{indexes[0]}..{indexes[-1]}; the disposal event: ids and states only")  # fmt: skip
        attempts = steward.call("GET", f"/api/v1/webhooks/{created['webhook_id']}/deliveries/",
                                expect=200).body["results"]  # fmt: skip
        expect(attempts and all(a["outcome"] == "delivered" for a in attempts),
               f"attempts not all delivered: {attempts[:3]}")  # fmt: skip
        _stream_over_asgi(top, tokens["curator"], start, len(events))
    finally:
        receiver.close()


def _stream_over_asgi(top: Topology, token: str, start: str | None, count: int) -> None:
    """The same events as text/event-stream from uvicorn (grounding.project.asgi)."""
    [port] = free_ports(1)
    service = top.supervisor.start(
        "stream",
        [sys.executable, "-m", "uvicorn", "grounding.project.asgi:application", "--host",
         "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        env=top.app_env("stream"), cwd=PROJECT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    wait_until("uvicorn /healthz", lambda: requests.get(f"{base}/healthz", timeout=2).ok,
               timeout=60, service=service)  # fmt: skip
    # As nginx would forward it: production settings redirect plain HTTP to HTTPS.
    headers = {"Authorization": f"Token {token}", "Accept": "text/event-stream",
               "X-Forwarded-Proto": "https"}  # fmt: skip
    if start:
        headers["Last-Event-ID"] = start
    seen: list[str] = []
    started = time.monotonic()
    with requests.get(f"{base}/api/v1/events/", params={"dimension": "demo"}, headers=headers,
                      stream=True, timeout=30, allow_redirects=False) as response:  # fmt: skip
        expect(response.status_code == 200, f"stream: {response.status_code}")
        # chunk_size=1: requests' default would wait for 512 bytes before a line.
        for line in response.iter_lines(chunk_size=1, decode_unicode=True):
            if line and line.startswith("id: "):
                seen.append(line[4:])
            if len(seen) >= count or time.monotonic() - started > 30:
                break
    expect(len(seen) == count, f"the ASGI stream gave {len(seen)} of {count} events")
    print(f"   text/event-stream from uvicorn (ASGI): the same {count} events, resumed "
          "with Last-Event-ID")  # fmt: skip
