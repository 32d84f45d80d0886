"""`manage.py run_sequencer`: the transparency log's sequencer as a service
(docker-compose, the production smoke): integrate committed leaves and sign
checkpoints every `--interval` seconds, until SIGTERM or SIGINT."""

from __future__ import annotations

import signal
import threading

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from transparency import notes, sequencer


class Command(BaseCommand):
    help = "Integrate committed leaves into their logs and sign checkpoints, continuously."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--interval", type=float, default=0.2, help="seconds between runs")
        parser.add_argument("--once", action="store_true", help="integrate once, then exit")

    def handle(self, *args, **options) -> None:
        # Without its key the service could integrate nothing (each batch is rolled back
        # at signing): refuse to start rather than retry the same batch for ever.
        try:
            notes.signer()
        except ImproperlyConfigured as refused:
            raise CommandError(str(refused)) from refused
        if options["once"]:
            self.stdout.write(f"integrated {sequencer.integrate()} leaves")
            return
        stop = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
        self.stdout.write(f"sequencer running every {options['interval']} s")
        self.stdout.flush()
        sequencer.run_forever(options["interval"], stop)
