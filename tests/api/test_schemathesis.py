"""Property-based conformance: schemathesis generates requests from /api/schema/
and runs them through the WSGI application as the curator, the reviewer, the
steward and the projection agent of a Dimension, over every operation, with every
check schemathesis has (`--checks all`).

No response may be a 5xx, and every response must match its declared status,
content type, headers and schema, for positive and negative (schema-violating)
requests alike. One check is configured, not dropped: schema-valid data may still
be refused by the rules the schema cannot state (an unknown Dimension, a missing
role, a stale revision), so positive_data_acceptance admits the documented refusal
statuses. Few examples per operation keep it bounded (about 15 s a role, one test
each, so parallel workers share them).
"""

from __future__ import annotations

from collections import Counter

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS
from schemathesis.config import ChecksConfig
from schemathesis.core.failures import Failure, FailureGroup
from werkzeug.test import Client

from grounding.project.wsgi import application
from tests import factories

MAX_EXAMPLES = 10
ROLES = ("curator", "reviewer", "steward", "projection_agent")
# Schema-valid requests the rules beyond the schema still refuse (the documented
# refusals, policies.api.serializers), and a conditional GET answered 304.
ACCEPTED_STATUSES = ["2xx", "304", "400", "401", "403", "404", "409", "412", "422", "428"]
# Schemathesis' default rejections, and 412: a stale If-Match refuses the request too
# (an earlier example may have moved the link on).
REJECTED_STATUSES = ["400", "401", "403", "404", "405", "406", "409", "412", "415", "422",
                     "428", "429"]  # fmt: skip


@pytest.fixture
def wsgi_in_test_transaction():
    """The WSGI handler closes "old" connections around each request, which would
    end the test's transaction; Django's own test client disconnects it the same way."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def _failures(error: BaseException) -> list[Failure]:
    if isinstance(error, FailureGroup):
        return [f for e in error.exceptions for f in _failures(e)]
    return [error] if isinstance(error, Failure) else []


# Transactional: each request commits (or rolls back) on its own, as when served; inside
# one test transaction a refusal that rolls back (a DataError answered 400) would end
# the transaction for every later request on PostgreSQL.
# One test per role: pytest-xdist spreads the four over its workers (one test of all
# four was the suite's longest, a minute on two cores, and ended runs alone).
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("role", ROLES)
def test_every_operation_conforms_to_the_schema_and_never_fails(
    role, world, wsgi_in_test_transaction, settings
):
    settings.ALLOWED_HOSTS = ["testserver", "localhost"]
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
    schema.config.checks = ChecksConfig.from_dict(
        {
            "positive_data_acceptance": {"expected-statuses": ACCEPTED_STATUSES},
            "negative_data_rejection": {"expected-statuses": REJECTED_STATUSES},
        }
    )
    every_check = CHECKS.get_all()
    requests = Counter()
    failed: Counter = Counter()
    examples: dict[str, str] = {}
    operations = 0
    headers = {"Authorization": f"Token {factories.token_for(getattr(world, role))}"}
    for result in schema.get_all_operations():
        operation = result.ok()
        names = {p.name for p in operation.path_parameters}
        # Aim at a link that exists, so the success paths run too.
        fixed = {"grounding_id": str(link.grounding_id)} if "grounding_id" in names else None
        strategy = operation.as_strategy(
            GenerationMode.POSITIVE, path_parameters=fixed
        ) | operation.as_strategy(GenerationMode.NEGATIVE, path_parameters=fixed)

        @given(case=strategy)
        @hypothesis_settings(
            max_examples=MAX_EXAMPLES,
            derandomize=True,  # the same examples every run: CI must not turn red by chance
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def run(case) -> None:
            requests[role] += 1
            try:
                # run() completes inside this iteration: the loop's values are this one's.
                case.call_and_validate(headers=headers, checks=every_check)
            except (Failure, FailureGroup) as error:
                for failure in _failures(error):
                    key = f"{type(failure).__name__} {case.method} {case.path}"
                    failed[key] += 1
                    status = getattr(failure, "status_code", "")
                    examples.setdefault(key, f"{status} {failure.title}: {failure.message}")

        run()
        operations += 1
    report = "\n".join(f"{n} × {k}\n    {examples[k]}" for k, n in failed.most_common())
    print(f"schemathesis: {sum(requests.values())} requests {dict(requests)}, "
          f"{sum(failed.values())} failures")  # fmt: skip
    assert operations >= 30
    print(report)
    assert not failed, report


@pytest.mark.django_db
def test_withdrawn_and_disposed_links_answer_as_the_schema_says(
    world, wsgi_in_test_transaction, settings
):
    """The shapes the generated requests rarely reach: a withdrawal, a disposal and a
    disposed link's tombstone (its read, its revisions), validated by schemathesis."""
    settings.ALLOWED_HOSTS = ["testserver", "localhost"]
    schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    client = Client(application)
    base = f"/api/v1/groundings/{link.grounding_id}/"
    token = factories.token_for(world.access_steward)

    def call(method: str, suffix: str, status: int, body=None, revision=None) -> dict:
        headers = {"Authorization": f"Token {token}"}
        if revision is not None:
            headers["If-Match"] = f'"{revision}"'
        response = client.open(base + suffix, method=method, headers=headers, json=body)
        assert response.status_code == status, response.get_data(as_text=True)
        template = "/api/v1/groundings/{grounding_id}/" + suffix.replace("1/", "{revision}/")
        schema[template][method].validate_response(response)
        return response.get_json()

    withdrawal = {"reason": "retracted", "authority_ref": "urn:policy:demo:withdrawal@1"}
    assert call("POST", "withdrawal/", 201, withdrawal, revision=1)["revision"] == 2
    assert call("GET", "", 200)["withdrawal"]["reason"] == "retracted"
    disposal = {"receipt_ref": "urn:receipt:1", "policy_ref": "urn:policy:retention@1"}
    call("POST", "disposal/", 201, disposal, revision=2)
    assert call("GET", "", 200)["record_state"] == "disposed"
    assert "results" not in call("GET", "revisions/", 200)
    assert call("GET", "revisions/1/", 200)["record_state"] == "disposed"
