"""`manage.py log_signing_key`: print a new GROUNDING_LOG_SIGNING_KEY (a base64
Ed25519 seed), or with `--public` the note verifier key of the configured one."""

from __future__ import annotations

import base64
import os

from django.core.management.base import BaseCommand

from transparency import notes


class Command(BaseCommand):
    help = "Print a new log signing key (base64 Ed25519 seed), or the configured one's public key."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--public", action="store_true", help="the verifier key instead")

    def handle(self, *args, **options) -> None:
        if options["public"]:
            self.stdout.write(notes.signer().verifier_key)
        else:
            self.stdout.write(base64.b64encode(os.urandom(32)).decode())
