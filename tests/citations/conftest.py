"""Fixtures of the citation tests."""

from __future__ import annotations

import pytest
from django.core.cache import cache


@pytest.fixture
def fresh_throttle():
    """An empty cache, so the throttle counters of one test never reach another."""
    cache.clear()
    yield
    cache.clear()
