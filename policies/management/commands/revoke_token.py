"""`manage.py revoke_token TOKEN_KEY` or `revoke_token --user USER [--expired]`.

TOKEN_KEY is the prefix `list_tokens` shows. A revoked token stops working at
once; the audit log keeps who revoked which.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from policies import tokens
from policies.management.commands._operator import refusals_as_errors, user_named


class Command(BaseCommand):
    help = "Revoke a client token by its key prefix, or a user's tokens."

    def add_arguments(self, parser) -> None:
        parser.add_argument("token_key", nargs="?", help="the prefix list_tokens shows")
        parser.add_argument("--user", metavar="USER", help="revoke this user's tokens")
        parser.add_argument(
            "--expired", action="store_true", help="with --user: only the expired ones"
        )

    def handle(self, *args, token_key: str | None, user: str | None, expired: bool, **_) -> None:
        if bool(token_key) == bool(user):
            raise CommandError("name a TOKEN_KEY or --user USER (not both)")
        if expired and not user:
            raise CommandError("--expired goes with --user")
        with refusals_as_errors():
            if token_key:
                token = tokens.revoke_token(actor=None, token_key=token_key)
                self.stdout.write(f"Revoked {token.token_key} of {token.user.get_username()}.")
                return
            revoked = tokens.revoke_tokens(actor=None, user=user_named(user), expired_only=expired)
        self.stdout.write(f"Revoked {len(revoked)} token(s) of {user}.")
