"""API test fixtures: a fresh throttle cache and generous rates, unless a test
sets its own."""

import pytest
from django.core.cache import cache


def uses_database(request) -> bool:
    """The throttle cache is a database table: clear it only where the test may query."""
    return bool(
        {"db", "transactional_db"} & set(request.fixturenames)
        or request.node.get_closest_marker("django_db")
    )


@pytest.fixture(autouse=True)
def _api_settings(request, settings):
    if uses_database(request):
        request.getfixturevalue("db")  # set up before the test's own fixtures need it
        cache.clear()
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {
        "read": "100000/min",
        "write": "100000/min",
        "bulk": "100000/min",
    }
    settings.REST_FRAMEWORK = rest
    yield
    if uses_database(request):
        cache.clear()
