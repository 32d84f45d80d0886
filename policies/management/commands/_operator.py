"""What the bootstrap commands share: looking up users and Dimensions by name, and
turning a refusal into a command error (exit status 1, no traceback)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from common.kernel.refusals import Refusal
from policies.choices import Role
from policies.models import Dimension
from policies.services import any_dimension_named

ROLE_CHOICES = list(Role.values)


def user_named(username: str):
    try:
        return get_user_model().objects.get(username=username)
    except get_user_model().DoesNotExist:
        raise CommandError(
            f"no user {username!r} (create one with `manage.py createsuperuser` "
            "or `manage.py grant_role … --create-user`)"
        ) from None


def dimension_named(name: str) -> Dimension:
    dimension = any_dimension_named(name)
    if dimension is None:
        raise CommandError(f"no Dimension {name!r} (create one with `manage.py create_dimension`)")
    return dimension


@contextmanager
def refusals_as_errors() -> Iterator[None]:
    try:
        yield
    except Refusal as refusal:
        raise CommandError(f"{refusal.code}: {refusal.detail}") from None
