"""One paced writer of the feed bench: `--rate` registrations a second for `--seconds`
through the service (each one event), started at `--start` (Unix time); prints JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate", type=float, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--offset", type=int, required=True)
    parser.add_argument("--start", type=float, required=True)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    import django

    django.setup()
    from django.db import OperationalError

    from bench import app, generate

    curator = app.curator()
    count = int(args.rate * args.seconds)
    payloads = [generate.register_payload(args.offset + i) for i in range(count)]
    app.register(actor=curator, payload=generate.register_payload(args.offset + count))  # warm
    time.sleep(max(0.0, args.start - time.time()))
    started = time.time()
    behind = retried = 0
    for i, payload in enumerate(payloads):
        due = started + i / args.rate
        wait = due - time.time()
        if wait > 0:
            time.sleep(wait)
        else:
            behind += 1
        for _ in range(5):  # a client retries a write the database aborted (a deadlock)
            try:
                app.register(actor=curator, payload=payload)
                break
            except OperationalError:
                retried += 1
    json.dump({"written": count, "started": started, "ended": time.time(), "late": behind,
               "retried": retried}, sys.stdout)  # fmt: skip


if __name__ == "__main__":
    main()
