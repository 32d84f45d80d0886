"""`manage.py list_tokens [--user USER] [--json]`: stored tokens, newest first.

Shows each token's `token_key` (the first 15 characters of its key: enough to
name it for `revoke_token`, not to use it), its user, when it was issued and
when it expires. Keys themselves are not stored, so never shown.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from policies import tokens
from policies.management.commands._operator import user_named


class Command(BaseCommand):
    help = "List client tokens (key prefixes, users, expiry); keys are never shown."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--user", metavar="USER", help="only this user's tokens")
        parser.add_argument("--json", dest="as_json", action="store_true", help="print JSON")

    def handle(self, *args, user: str | None, as_json: bool, **_) -> None:
        owner = user_named(user) if user else None
        rows = [
            {
                "token_key": token.token_key,
                "user": token.user.get_username(),
                "created_at": token.created.isoformat(),
                "expires_at": token.expiry.isoformat() if token.expiry else None,
                "expired": tokens.is_expired(token),
            }
            for token in tokens.tokens(user=owner)
        ]
        if as_json:
            self.stdout.write(json.dumps(rows))
            return
        if not rows:
            self.stdout.write("No tokens.")
            return
        self.stdout.write(f"{'token_key':<16} {'user':<24} {'created':<20} expires")
        for row in rows:
            state = " (expired)" if row["expired"] else ""
            self.stdout.write(
                f"{row['token_key']:<16} {row['user']:<24} {row['created_at'][:19]:<20} "
                f"{(row['expires_at'] or '-')[:19]}{state}"
            )
