"""`manage.py grant_role USER ROLE --dimension NAME [--create-user]`.

`--create-user` creates a missing user without a password (it signs in with
tokens only): the usual shape of a client's service account.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from policies import governance
from policies.actions import refusal_audited
from policies.choices import Role
from policies.management.commands._operator import (
    ROLE_CHOICES,
    dimension_named,
    refusals_as_errors,
    user_named,
)


class Command(BaseCommand):
    help = "Grant a user a role in a Dimension (idempotent)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument("role", choices=ROLE_CHOICES)
        parser.add_argument("--dimension", required=True, metavar="NAME")
        parser.add_argument(
            "--create-user", action="store_true", help="create the user (token access only)"
        )

    def handle(self, *args, username: str, role: str, dimension: str, create_user: bool, **_):
        target = dimension_named(dimension)
        # The user and the grant in one transaction: grant_role's body (policies.actions).
        with refusals_as_errors(), refusal_audited("grant_role", actor=None, dimension=target):
            if create_user:
                user, created = get_user_model().objects.get_or_create(username=username)
                if created:
                    user.set_unusable_password()
                    user.save()
            else:
                user = user_named(username)
            governance.do_grant_role(actor=None, dimension=target, user=user, role=Role(role))
        self.stdout.write(f"{username} is {role} in {target.name}.")
