"""`manage.py issue_token USER [--days N]`: a new client token, printed once.

Only its SHA-512 digest is stored, so the key cannot be shown again: keep it
where the client reads its secrets. `--quiet` prints the key alone (for scripts).
"""

from __future__ import annotations

import json
from datetime import timedelta

from django.core.management.base import BaseCommand

from policies import tokens
from policies.management.commands._operator import refusals_as_errors, user_named


class Command(BaseCommand):
    help = "Issue a client token for a user (shown once; stored hashed; expires)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--days",
            type=int,
            default=None,
            help="lifetime in days (default GROUNDING_TOKEN_TTL_DAYS, 90; at most 3650)",
        )
        output = parser.add_mutually_exclusive_group()
        output.add_argument("--quiet", action="store_true", help="print only the key")
        output.add_argument("--json", dest="as_json", action="store_true", help="print JSON")

    def handle(self, *args, username: str, days: int | None, quiet: bool, as_json: bool, **_):
        user = user_named(username)
        ttl = None if days is None else timedelta(days=days)
        with refusals_as_errors():
            issued = tokens.issue_token(actor=None, user=user, ttl=ttl)
        expires = issued.token.expiry.isoformat() if issued.token.expiry else None
        if quiet:
            self.stdout.write(issued.key)
        elif as_json:
            self.stdout.write(
                json.dumps(
                    {
                        "user": username,
                        "token_key": issued.token.token_key,
                        "expires_at": expires,
                        "key": issued.key,
                    }
                )
            )
        else:
            self.stdout.write(
                f"Token {issued.token.token_key}… for {username}, expires {expires}.\n"
                f"Authorization: Token {issued.key}\n"
                "The key is shown only now; only its hash is stored."
            )
