"""`manage.py revoke_role USER ROLE --dimension NAME`: the membership ends; its
history keeps who held it. The user's tokens stay (other roles may need them):
revoke them with `revoke_token --user USER`."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from policies import governance
from policies.choices import Role
from policies.management.commands._operator import (
    ROLE_CHOICES,
    dimension_named,
    refusals_as_errors,
    user_named,
)


class Command(BaseCommand):
    help = "Revoke a user's role in a Dimension."

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument("role", choices=ROLE_CHOICES)
        parser.add_argument("--dimension", required=True, metavar="NAME")

    def handle(self, *args, username: str, role: str, dimension: str, **_) -> None:
        target = dimension_named(dimension)
        user = user_named(username)
        with refusals_as_errors():
            held = governance.revoke_role(actor=None, dimension=target, user=user, role=Role(role))
        if not held:
            raise CommandError(f"{username} is not {role} in {target.name}")
        self.stdout.write(f"{username} is no longer {role} in {target.name}.")
