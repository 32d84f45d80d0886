"""The audit event of a refused request that no service audited.

Services audit their own refusals (their public entries, policies.actions;
conditional.expected_revision). What is refused before or around them — a body that
does not parse or is too large or too deep, a serializer's validation, a policy
endpoint's refusal, a database conflict, a crash — is audited here, once, through
the same writer (`policies.actions.audit_refusal`), by the API's exception handler:
every refused request on an operation endpoint leaves an event with its code.

Not audited: 401 and 429. An event per unauthenticated or throttled request would let
anyone write audit rows at the rate they can send requests.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from django.http import HttpRequest
from django.urls import Resolver404, resolve

from policies import audit
from policies.actions import audit_refusal
from policies.kernel.request_context import refusal_noted
from policies.kernel.text import plausible_ref

logger = logging.getLogger("grounding.api")

# (view name, method) of every operation endpoint -> its audit action (the services'
# own action names, so accepted and refused events of an operation share one).
# Every write route of the URLconf must have its row: tests/api/test_refusal_audit_routes.py
# walks the URL patterns and proves each write method's unparseable body leaves one
# refused event under the action its accepted operation records.
ACTIONS: dict[tuple[str, str], str] = {
    ("grounding_api:link-list", "POST"): "register",
    ("grounding_api:link-bulk", "POST"): "register_bulk",
    ("link-from-citations", "POST"): "register_from_citations",
    ("grounding_api:link-detail", "PATCH"): "revise",
    ("grounding_api:link-assessments", "POST"): "bind_assessment",
    ("grounding_api:link-anchor-observations", "POST"): "record_anchor_observation",
    ("grounding_api:link-withdrawal", "POST"): "withdraw",
    ("grounding_api:link-disposal", "POST"): "dispose",
    ("grounding_api:link-projection", "GET"): "project",
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
    # Reads: a refused read leaves its event like a refused write (issue 12).
    ("grounding_api:link-list", "GET"): "read",
    ("grounding_api:link-detail", "GET"): "read",
    ("grounding_api:link-revisions", "GET"): "read",
    ("grounding_api:link-revision", "GET"): "read",
    ("grounding_api:evidence-set-detail", "GET"): "read_evidence_set",
    ("evidence:passage-list", "GET"): "read_passage",
    ("evidence:passage-detail", "GET"): "read_passage",
}
UNAUDITED_STATUS = frozenset({401, 429})


def action_for(request: HttpRequest) -> tuple[str, dict[str, Any]] | None:
    """The audit action of the operation endpoint this request addressed, and its
    path arguments; None for any other request."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return None
    action = ACTIONS.get((match.view_name, request.method or ""))
    return (action, dict(match.kwargs)) if action else None


def audit_refused_request(request: Any, code: str, status_code: int) -> None:
    """Write the refused event of this request unless a service already wrote one."""
    if request is None or status_code in UNAUDITED_STATUS or refusal_noted():
        return
    found = action_for(getattr(request, "_request", request))
    if found is None:
        return
    action, kwargs = found
    # DRF keeps the authenticated user in _user; reading .user again would re-run the
    # authentication that may be what failed.
    actor = getattr(request, "_user", None)
    grounding_id = _uuid(kwargs.get("grounding_id"))
    body = getattr(request, "_full_data", None)
    dimension = body.get("dimension") if isinstance(body, dict) else None
    try:
        # The Dimension the request names or its link is in; the event keeps it only
        # when the caller holds a role there (policies.audit.record).
        if grounding_id is not None:
            dimension = audit.link_dimension(grounding_id, actor=actor)
        audit_refusal(
            action,
            code[:64],
            actor=actor,
            grounding_id=grounding_id,
            dimension=dimension if plausible_ref(dimension, 63) else None,
        )
    except Exception:  # the refusal is answered even when its event cannot be written
        logger.exception("could not write the audit event of a refused request")


def _uuid(value: Any) -> uuid.UUID | None:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value)) if value is not None else None
    except ValueError:
        return None
