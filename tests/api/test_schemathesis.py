"""Property-based conformance: schemathesis generates requests from /api/schema/
and runs them through the WSGI application as an authenticated curator. No
response may be a 5xx, and every response must match its declared status,
content type and schema."""

from __future__ import annotations

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from grounding.wsgi import application
from tests import factories

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
MAX_EXAMPLES = 10
# The evidence API is another module's; its operations are run for "no 5xx" only.
OURS = ("/groundings", "/evidence-sets", "/disclosure-decisions", "/dimensions", "/profiles")


@pytest.fixture
def wsgi_in_test_transaction():
    """The WSGI handler closes "old" connections around each request, which would
    end the test's transaction; Django's own test client disconnects it the same way."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.mark.django_db
def test_every_operation_conforms_to_the_schema_and_never_fails(
    world, wsgi_in_test_transaction, settings
):
    settings.ALLOWED_HOSTS = ["testserver", "localhost"]
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    token = factories.token_for(world.curator)
    schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
    headers = {"Authorization": f"Token {token}"}
    ran = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        ours = operation.path.removeprefix("/api/v1").startswith(OURS)
        checks = CHECKS if ours else [not_a_server_error]
        names = {p.name for p in operation.path_parameters}
        # Aim at a link that exists, so the success paths run too; positive and
        # negative (schema-violating) requests alike.
        fixed = {"grounding_id": str(link.grounding_id)} if "grounding_id" in names else None

        strategy = operation.as_strategy(
            GenerationMode.POSITIVE, path_parameters=fixed
        ) | operation.as_strategy(GenerationMode.NEGATIVE, path_parameters=fixed)

        @given(case=strategy)
        @hypothesis_settings(
            max_examples=MAX_EXAMPLES,
            # Same examples every run: CI must not turn red by chance.
            derandomize=True,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def run(case) -> None:
            # run() completes inside this iteration, so `checks` is this operation's.
            case.call_and_validate(headers=headers, checks=checks)  # noqa: B023

        run()
        ran += 1
    assert ran >= 20
