"""API test fixtures: a fresh throttle cache and generous rates, unless a test
sets its own."""

import pytest
from django.core.cache import cache
from django.test import Client

from tests.api.strict_responses import served_schema


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


@pytest.fixture(autouse=True)
def _strict_responses(request, monkeypatch):
    """Every response of Django's test client (and DRF's APIClient, which is one) is
    validated against the served schema (tests.api.strict_responses); a test that
    means to receive an undescribed response says so with
    `@pytest.mark.undescribed_responses("why")`."""
    if request.node.get_closest_marker("undescribed_responses"):
        yield
        return
    original = Client.request

    def request_and_check(self, **environ):
        response = original(self, **environ)
        sent = response.request
        served_schema().check(
            sent["REQUEST_METHOD"],
            sent["PATH_INFO"],
            response.status_code,
            response.get("Content-Type", ""),
            b"" if response.streaming else response.content,
        )
        return response

    monkeypatch.setattr(Client, "request", request_and_check)
    yield
