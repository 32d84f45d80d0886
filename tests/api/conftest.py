"""API test fixtures: a fresh throttle cache and generous rates, unless a test
sets its own."""

import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def _api_settings(settings):
    cache.clear()
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {
        "read": "100000/min",
        "write": "100000/min",
        "bulk": "100000/min",
    }
    settings.REST_FRAMEWORK = rest
    yield
    cache.clear()
