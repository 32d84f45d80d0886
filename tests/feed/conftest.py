from __future__ import annotations

import pytest

from feed import services


@pytest.fixture(autouse=True)
def _private_receivers(settings):
    """The receivers of these tests listen on loopback, over http."""
    settings.GROUNDING_WEBHOOK_ALLOW_PRIVATE = True
    settings.GROUNDING_WEBHOOK_TIMEOUT = 2


def subscribe(world, url: str, **extra):
    return services.create_webhook(
        actor=world.steward, dimension=world.dimension.name, url=url, **extra
    )
