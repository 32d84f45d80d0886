"""Every list reads `page_size` as the OpenAPI description says: an integer from 1 to
10^18 - 1 (capped at 200); anything else is refused, never silently replaced by the
default."""

import pytest

from tests.api.helpers import client_for, problem

LISTS = [
    ("curator", "/api/v1/groundings/"),
    ("curator", "/api/v1/evidence/passages/"),
    ("curator", "/api/v1/change-notifications/"),
    ("steward", "/api/v1/audit-events/"),
]


@pytest.mark.parametrize(("role", "path"), LISTS)
@pytest.mark.parametrize("value", ["0", "-3", "1.5", "ten", "", "1" + "0" * 18, "9" * 5000])
def test_a_page_size_that_is_not_a_positive_integer_is_refused(world, role, path, value):
    response = client_for(getattr(world, role)).get(path, {"page_size": value})
    body = problem(response, 400, "validation_error")
    assert body["offenders"] == [
        {
            "pointer": "/query/page_size",
            "code": "type",
            "detail": "page_size must be a positive integer of at most 18 digits.",
        }
    ]


@pytest.mark.parametrize(("role", "path"), LISTS)
def test_a_large_page_size_is_capped_and_an_unreadable_cursor_is_not_found(world, link, role, path):
    client = client_for(getattr(world, role))
    assert client.get(path, {"page_size": "5000"}).status_code == 200
    # Up to the schema's maximum, 10^18 - 1 (schemathesis: 10^18 was answered 200
    # although the schema's maximum excludes it; it is refused above).
    assert client.get(path, {"page_size": "9" * 18}).status_code == 200
    problem(client.get(path, {"cursor": "not-a-cursor"}), 404, "not_found")
