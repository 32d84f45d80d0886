"""`manage.py deliver_events`: deliver the outbox's events to webhook subscriptions.

Run as many as you like, on as many machines (each claims a subscription's lane
with FOR UPDATE SKIP LOCKED; docs/events.md "Delivery workers"). SIGTERM or SIGINT
stop it after the batches in hand; `--once` delivers what is due and exits.
"""

from __future__ import annotations

import signal
import threading

from django.core.management.base import BaseCommand, CommandError

from feed import worker


class Command(BaseCommand):
    help = "Deliver the event feed's webhooks (several workers may run at once)."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--threads", type=int, default=4, help="subscriptions served at once (default 4)"
        )
        parser.add_argument(
            "--poll", type=float, default=1.0, help="seconds between looks when idle"
        )
        parser.add_argument(
            "--once", action="store_true", help="deliver what is due now, then exit"
        )

    def handle(self, *args, **options) -> None:
        if options["threads"] < 1 or options["poll"] <= 0:
            raise CommandError("--threads must be at least 1 and --poll positive")
        if options["once"]:
            made = worker.deliver_until_idle()
            self.stdout.write(f"{made} delivery attempts")
            return
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        self.stdout.write(f"delivering with {options['threads']} threads")
        self.stdout.flush()
        worker.run(threads=options["threads"], poll=options["poll"], stop=stop)
