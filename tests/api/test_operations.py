"""One declared operation per route and method (#26 item 1): every route of the API
has its `Operation`, whose action names the accepted and the refused events, whose
declaration is what the OpenAPI description says, and whose refusals before any
service (an unparseable body, an Accept it cannot answer) are audited under it."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework import serializers

from common.web.operation_schema import input_serializer, output_serializer
from common.web.operations import answers, api_routes
from grounding import bodies
from grounding.services import inputs
from policies.models import AuditEvent
from tests.api.helpers import client_for, problem

# The audit action of each write: the audit trail's contract (API.md "Audit"), which
# the declarations must keep.
ACCEPTED = {
    ("link-from-citations", "POST"): "register_from_citations",
    ("grounding_api:link-list", "POST"): "register",
    ("grounding_api:link-bulk", "POST"): "register_bulk",
    ("grounding_api:link-detail", "PATCH"): "revise",
    ("grounding_api:link-assessments", "POST"): "bind_assessment",
    ("grounding_api:link-anchor-observations", "POST"): "record_anchor_observation",
    ("grounding_api:link-withdrawal", "POST"): "withdraw",
    ("grounding_api:link-disposal", "POST"): "dispose",
    ("grounding_api:change-notification-list", "POST"): "notify_change",
    ("grounding_api:evidence-set-list", "POST"): "create_evidence_set",
    ("grounding_api:evidence-set-members", "POST"): "change_evidence_set",
    ("grounding_api:evidence-set-member", "DELETE"): "change_evidence_set",
    ("policies_api:decision-list", "POST"): "record_disclosure_decision",
    ("policies_api:decision-detail", "DELETE"): "revoke_disclosure_decision",
    ("policies_api:dimension-list", "POST"): "create_dimension",
    ("policies_api:profile-list", "POST"): "create_profile",
    ("feed_api:webhook-list", "POST"): "create_webhook",
    ("feed_api:webhook-detail", "PATCH"): "change_webhook",
    ("feed_api:webhook-detail", "DELETE"): "delete_webhook",
    ("feed_api:webhook-delivery-retry", "POST"): "retry_delivery",
    ("policies_api:profile-publish", "POST"): "publish_profile",
    ("evidence:wsp-import", "POST"): "wsp_import",
    ("evidence:document-import", "POST"): "pdf_import",
}
# Operations that read no body, or refuse before reading it: still one refused event.
ANSWERED_BEFORE_THE_BODY = {
    ("policies_api:decision-detail", "DELETE"): (404, "not_found"),  # no body
    ("policies_api:profile-publish", "POST"): (404, "not_found"),  # no body
    ("policies_api:dimension-list", "POST"): (403, "operator_required"),  # who, first
    ("feed_api:webhook-detail", "DELETE"): (404, "not_found"),  # no body
    ("feed_api:webhook-delivery-retry", "POST"): (404, "not_found"),  # no body
    # A PDF upload is multipart/form-data: a JSON body is the wrong media type.
    ("evidence:document-import", "POST"): (415, "unsupported_media_type"),
}
# Path arguments by name, typed as the converters want them.
ARGUMENTS = {
    "grounding_id": uuid.UUID(int=1),
    "notification_id": uuid.UUID(int=2),
    "passage_id": uuid.UUID(int=3),
    "revision": 1,
    "ref": "urn:set:none",  # an evidence set's, or a profile's name@version
    "key": "urn:access:none",
    "webhook_id": uuid.UUID(int=4),
    "document_id": uuid.UUID(int=5),
    "n": "1",  # a webhook's delivery attempt
}
ROUTES = sorted(api_routes(), key=lambda r: (r.name, r.method))
WRITES = [r for r in ROUTES if r.method != "GET"]


def _path(route) -> str:
    return reverse(route.name, kwargs={key: ARGUMENTS[key] for key in route.converters})


def _id(route) -> str:
    return f"{route.method} {route.name}"


def test_every_route_and_method_of_the_api_has_its_operation_and_audit_action():
    undeclared = [_id(r) for r in ROUTES if r.operation is None or not r.operation.action]
    assert undeclared == []
    # Every route is audited but the public ones, open to anyone and refusing nothing:
    # the API root and the log's verifier key.
    assert sorted(_id(r) for r in ROUTES if not r.operation.audited) == [
        "GET api-root",
        "GET transparency_api:log-public-key",
    ]
    # Routes added by any app are found: all the collections of the API root.
    assert {r.name for r in ROUTES} >= {
        "grounding_api:link-list",
        "policies_api:audit-event-list",
        "evidence:passage-list",
        "link-from-citations",
    }


def test_every_declared_input_and_output_is_a_serializer_and_grounding_inputs_compile():
    for route in ROUTES:
        operation = route.operation
        for found in (input_serializer(operation), output_serializer(operation)):
            # A dict: the responses of an answer that is not JSON (a signed note).
            assert (
                found is None
                or isinstance(found, dict)
                or issubclass(found, serializers.BaseSerializer)
            ), _id(route)
        # A body of any module of grounding.bodies.
        package = f"{bodies.__name__}."
        if isinstance(operation.input, type) and operation.input.__module__.startswith(package):
            # The checks its body runs are the ones its declaration names.
            assert inputs.of(operation).names, _id(route)


def test_each_writes_declared_action_is_the_audit_trails():
    assert {(r.name, r.method): r.operation.action for r in WRITES} == ACCEPTED


@pytest.fixture(scope="module")
def schema(django_db_blocker) -> dict:
    with django_db_blocker.unblock():
        return Client().get("/api/schema/?format=json").json()


def _schema_path(route) -> str:
    path = "/" + route.pattern
    for name, converter in route.converters.items():
        path = path.replace(f"<{converter}:{name}>", f"{{{name}}}").replace(
            f"<{name}>", f"{{{name}}}"
        )
    return path


@pytest.mark.parametrize("route", ROUTES, ids=_id)
def test_the_openapi_operation_answers_what_the_declaration_does(schema, route):
    operation = route.operation
    documented = schema["paths"][_schema_path(route)][route.method.lower()]
    declared = answers(operation, route.method)
    assert sorted(documented["responses"], key=int) == [str(s) for s in declared]
    for status, codes in declared.items():
        response = documented["responses"][str(status)]
        if codes:  # a problem, described by exactly its codes
            assert list(response["content"]) == ["application/problem+json"]
            described = response["description"]
            assert all(code in described for code in codes), (status, described)
    parameters = {(p["in"], p["name"]) for p in documented.get("parameters", [])}
    assert {("query", param.name) for param in operation.query} <= parameters
    assert (("header", "If-Match") in parameters) == operation.conditional
    assert (("header", "Idempotency-Key") in parameters) == (route.method != "GET")
    assert ("requestBody" in documented) == (operation.input is not None)


@pytest.mark.parametrize("route", WRITES, ids=_id)
def test_an_unparseable_body_leaves_one_refused_event_of_the_operations_action(world, route):
    client = client_for(world.curator)
    response = getattr(client, route.method.lower())(
        _path(route), data="{", content_type="application/json", HTTP_IF_MATCH='"1"'
    )
    status, code = ANSWERED_BEFORE_THE_BODY.get((route.name, route.method), (400, "parse_error"))
    problem(response, status, code)
    events = list(
        AuditEvent.objects.filter(actor=world.curator).values_list("action", "outcome", "code")
    )
    assert events == [(route.operation.action, "refused", code)]


@pytest.mark.parametrize("route", [r for r in ROUTES if r.operation.audited], ids=_id)
def test_an_answer_it_cannot_give_is_refused_and_audited_under_the_operations_action(world, route):
    """An Accept the API cannot answer (406) is refused before any service, on every
    route and method: one refused event, under the declared action."""
    client = client_for(world.steward)
    response = getattr(client, route.method.lower())(_path(route), HTTP_ACCEPT="text/html")
    problem(response, 406, "not_acceptable")
    events = list(
        AuditEvent.objects.filter(actor=world.steward).values_list("action", "outcome", "code")
    )
    assert events == [(route.operation.action, "refused", "not_acceptable")]
