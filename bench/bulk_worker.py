"""One bulk-registration writer for the concurrent figure: its own process (its own
interpreter and connection, as a second app server would have), started by
workloads.bulk_register. Registers `--batches` batches of 1,000 from `--offset`,
starting at the wall-clock `--start`, and prints the start and end times as JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--offset", type=int, required=True)
    parser.add_argument("--batches", type=int, required=True)
    parser.add_argument("--start", type=float, required=True, help="time.time() to begin at")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from bench import generate
    from grounding import services

    curator = get_user_model().objects.get(username="demo-curator")
    size = 1000
    batches = [
        [generate.register_payload(args.offset + b * size + i) for i in range(size)]
        for b in range(args.batches)
    ]
    # Warm this process (imports, caches, connection) before the common start.
    services.register_many(actor=curator, items=[generate.register_payload(args.offset - 1)])
    time.sleep(max(0.0, args.start - time.time()))
    started = time.time()
    for items in batches:
        services.register_many(actor=curator, items=items)
    print(json.dumps({"started": started, "ended": time.time(), "links": size * args.batches}))


if __name__ == "__main__":
    main()
