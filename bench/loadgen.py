"""A bounded load generator: N threads on keep-alive HTTP/1.1 connections to one or
more loopback servers. Stops after `--requests` requests or `--seconds`, whichever
comes first, and prints one JSON object with every latency and status.

Run as its own process so the generator's CPU is not the server's."""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import threading
import time
from collections import Counter


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ports", required=True, help="comma-separated loopback ports")
    parser.add_argument("--path", required=True)
    parser.add_argument("--method", default="POST")
    parser.add_argument("--token", required=True)
    parser.add_argument("--body-file", required=True, help="JSON list of request bodies")
    parser.add_argument("--if-match", default="")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--barrier", action="store_true", help="start every client at once")
    args = parser.parse_args()

    ports = [int(p) for p in args.ports.split(",")]
    with open(args.body_file, encoding="utf-8") as handle:
        bodies = [json.dumps(b).encode() for b in json.load(handle)]
    latencies: list[float] = []
    statuses: Counter = Counter()
    lock = threading.Lock()
    issued = [0]
    deadline = time.monotonic() + args.seconds
    barrier = threading.Barrier(args.clients)

    def client(index: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", ports[index % len(ports)], timeout=30)
        headers = {
            "Authorization": f"Token {args.token}",
            "Content-Type": "application/json",
        }
        if args.if_match:
            headers["If-Match"] = args.if_match
        if args.barrier:
            barrier.wait()
        while time.monotonic() < deadline:
            with lock:
                if issued[0] >= args.requests:
                    return
                n = issued[0]
                issued[0] += 1
            body = bodies[n % len(bodies)]
            started = time.perf_counter()
            try:
                conn.request(args.method, args.path, body=body, headers=headers)
                response = conn.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", ports[index % len(ports)])
                status = 0
            elapsed = time.perf_counter() - started
            with lock:
                latencies.append(elapsed)
                statuses[status] += 1

    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    json.dump(
        {"wall_seconds": wall, "latencies": latencies, "statuses": dict(statuses)}, sys.stdout
    )


if __name__ == "__main__":
    main()
