"""Every write route of the URLconf audits a body that does not parse, once, under the
action its accepted operation records (#26: POST /change-notifications/ left none)."""

from __future__ import annotations

import uuid

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from policies.models import AuditEvent
from policies.web.refusal_audit import ACTIONS
from tests.api.helpers import client_for, problem

WRITE_METHODS = ("post", "put", "patch", "delete")
# The action each operation's accepted event records (its service's audit.record).
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
    ("policies_api:profile-publish", "POST"): "publish_profile",
    ("evidence:wsp-import", "POST"): "wsp_import",
    ("feed_api:webhook-list", "POST"): "create_webhook",
    ("feed_api:webhook-detail", "PATCH"): "change_webhook",
    ("feed_api:webhook-detail", "DELETE"): "delete_webhook",
    ("feed_api:webhook-delivery-retry", "POST"): "retry_delivery",
}
# Operations that read no body, or refuse before reading it: still one refused event.
ANSWERED_BEFORE_THE_BODY = {
    ("policies_api:decision-detail", "DELETE"): (404, "not_found"),  # no body
    ("policies_api:profile-publish", "POST"): (404, "not_found"),  # no body
    ("policies_api:dimension-list", "POST"): (403, "operator_required"),  # who, first
    ("feed_api:webhook-detail", "DELETE"): (404, "not_found"),  # no body
    ("feed_api:webhook-delivery-retry", "POST"): (404, "not_found"),  # no body
}
# Path arguments by name, typed as the converters want them.
ARGUMENTS = {
    "grounding_id": uuid.UUID(int=1),
    "notification_id": uuid.UUID(int=2),
    "ref": "urn:set:none",  # an evidence set's, or a profile's name@version
    "key": "urn:access:none",
    "webhook_id": uuid.UUID(int=3),
    "n": 1,
}


def _write_routes(resolver=None, namespace: str | None = None):
    """(view name, method) of every API route whose view answers a write method."""
    for pattern in (resolver or get_resolver()).url_patterns:
        if isinstance(pattern, URLResolver):
            inner = pattern.namespace
            name = f"{namespace}:{inner}" if namespace and inner else inner or namespace
            if name != "admin":  # the admin's own forms, audited by its change pages
                yield from _write_routes(pattern, name)
        elif isinstance(pattern, URLPattern):
            view = getattr(pattern.callback, "view_class", None)
            for method in WRITE_METHODS:
                if view is not None and hasattr(view, method):
                    name = f"{namespace}:{pattern.name}" if namespace else pattern.name
                    yield name, method.upper(), list(pattern.pattern.converters)


ROUTES = sorted(_write_routes())


def test_every_write_route_has_its_refusal_audit_action():
    assert {(name, method) for name, method, _ in ROUTES} == set(ACCEPTED)
    assert {key: ACTIONS.get(key) for key in ACCEPTED} == ACCEPTED


@pytest.mark.parametrize(
    ("name", "method", "arguments"), ROUTES, ids=[f"{m} {n}" for n, m, _ in ROUTES]
)
def test_an_unparseable_body_leaves_one_refused_event_of_the_operations_action(
    world, name, method, arguments
):
    path = reverse(name, kwargs={key: ARGUMENTS[key] for key in arguments})
    client = client_for(world.curator)
    response = getattr(client, method.lower())(
        path, data="{", content_type="application/json", HTTP_IF_MATCH='"1"'
    )
    status, code = ANSWERED_BEFORE_THE_BODY.get((name, method), (400, "parse_error"))
    problem(response, status, code)
    events = list(
        AuditEvent.objects.filter(actor=world.curator).values_list("action", "outcome", "code")
    )
    assert events == [(ACCEPTED[(name, method)], "refused", code)]
