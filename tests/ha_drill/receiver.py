"""`python -m tests.ha_drill.receiver PORT JOURNAL`: the event feed's receiver as a
service of its own (the prod smoke's `Receiver`), writing each delivery to JOURNAL as
a line of JSON before answering 204, so the drill (or anyone, with HA_KEEP) can read
every delivery back, and it outlives the drill's own process."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

from tests.prod_smoke.feed import Receiver


def deliveries(journal: Path) -> list[dict]:
    """Every delivery so far: {"at", "headers", "body"} (the body as sent)."""
    try:
        lines = journal.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    # The last line may be half-written while we read.
    found = []
    for line in lines:
        try:
            found.append(json.loads(line))
        except ValueError:
            continue
    return found


def main() -> None:
    port, journal = int(sys.argv[1]), Path(sys.argv[2])
    receiver = Receiver(port, journal)
    print(f"receiving on {receiver.url}, journal {journal}", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
