"""The audit event of a refused request that no service audited.

Services audit their own refusals (their public entries, policies.actions;
conditional.expected_revision). What is refused before or around them — a body that
does not parse or is too large or too deep, a serializer's validation, a policy
endpoint's refusal, a database conflict, a crash — is audited here, once, through
the same writer (`policies.actions.audit_refusal`), by the API's exception handler:
every refused request on an operation endpoint leaves an event with its code, under
the action the operation declares (`policies.operations.Operation.action`; the view's
`operation`, found from the URLconf by common.web.operations.routed).

Not audited: 401 and 429. An event per unauthenticated or throttled request would let
anyone write audit rows at the rate they can send requests.
"""

from __future__ import annotations

import logging
from typing import Any

from django.http import HttpRequest

from common.kernel import lost_connection
from common.kernel.identifiers import parse_uuid
from common.kernel.request_context import refusal_noted, write_in_doubt
from common.kernel.text import plausible_ref
from common.web.operations import routed
from policies import audit
from policies.actions import audit_refusal

logger = logging.getLogger("grounding.api")

UNAUDITED_STATUS = frozenset({401, 429})


def action_for(request: HttpRequest) -> tuple[str, dict[str, Any]] | None:
    """The audit action of the operation this request addressed (its declaration's,
    common.web.operations), and its path arguments; None for any other request and
    for an operation that audits no refusal."""
    found = routed(request)
    if found is None or not found[0].audited:
        return None
    operation, kwargs = found
    return operation.action, kwargs


def audit_refused_request(request: Any, code: str, status_code: int) -> None:
    """Write the refused event of this request unless a service already wrote one."""
    if request is None or status_code in UNAUDITED_STATUS or refusal_noted():
        return
    if write_in_doubt():
        # Its COMMIT lost the connection: it may be applied. A refused event could
        # contradict the applied one; the keyed retry records the outcome.
        return
    found = action_for(getattr(request, "_request", request))
    if found is None:
        return
    action, kwargs = found
    # DRF keeps the authenticated user in _user; reading .user again would re-run the
    # authentication that may be what failed.
    actor = getattr(request, "_user", None)
    grounding_id = parse_uuid(kwargs.get("grounding_id"))
    body = getattr(request, "_full_data", None)
    dimension = body.get("dimension") if isinstance(body, dict) else None
    if dimension is None:
        # An import names its Dimension in the query (?dimension=), its body being a
        # document or a file.
        dimension = getattr(request, "GET", {}).get("dimension")
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
    except Exception as exc:  # the refusal is answered even when its event cannot be written
        if lost_connection.is_lost(exc):  # nor is a dead or read-only session kept for later
            lost_connection.discard_failed()
            logger.warning("could not write the audit event of a refused request: %s", exc)
            return
        logger.exception("could not write the audit event of a refused request")
