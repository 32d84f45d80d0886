"""Conditional requests, in one place: ETag out, If-Match / expected_revision in,
If-None-Match on reads.

Every response about a link (or evidence set) carries `ETag: "<revision>"`, a
strong tag. A mutation of an existing aggregate names the revision it expects,
in `If-Match` or in the body's `expected_revision`:

| If-Match             | body expected_revision | outcome                           |
| -------------------- | ---------------------- | --------------------------------- |
| absent               | absent                 | 428 precondition_required         |
| absent               | n                      | expects n                         |
| "n"                  | absent or n            | expects n                         |
| "n"                  | m != n                 | 400 expected_revision_conflict    |
| *                    | absent                 | 428 precondition_required         |
| *                    | n                      | expects n (`*` names no revision) |
| W/"n"                | anything               | 412 revision_mismatch (a)         |
| "a", "b" (a list)    | anything               | 400 invalid_if_match (b)          |
| not a quoted integer | anything               | 400 invalid_if_match              |

(a) If-Match uses strong comparison, so a weak tag never matches (RFC 9110
    §13.1.1); the service refuses it under its lock with current_revision.
(b) A mutation names exactly one revision; a list would make "which one did you
    read?" ambiguous in the audit trail.

A stale revision is refused by the service itself, under the row lock, as 412
revision_mismatch with `current_revision` in the body: the check here only parses,
so no interleaving of writers can slip between a check and a write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from common.kernel.refusals import Offender, Refusal
from grounding.selectors import dimension_name_of
from policies.actions import audit_refusal

# Revisions are PositiveIntegerFields; nine digits keep any value inside them.
_REVISION = re.compile(r"[1-9][0-9]{0,8}")
_TAG = re.compile(r'\s*(W/)?"([^"]*)"\s*(?:,|$)')
# No revision is ever 0: a weak tag is passed on as this, so the service refuses it
# with its usual 412 and the current revision, after its role checks and audit.
NEVER_MATCHES = 0
MAX_REVISION = 999_999_999


@dataclass(frozen=True)
class _Tag:
    weak: bool
    opaque: str


def etag(revision: int) -> str:
    return f'"{revision}"'


def _parse_tags(header: str) -> list[_Tag] | None:
    """The entity tags of an If-Match/If-None-Match list, or None when malformed."""
    tags: list[_Tag] = []
    position = 0
    text = header.strip()
    while position < len(text):
        match = _TAG.match(text, position)
        if match is None or match.end() == position:
            return None
        tags.append(_Tag(bool(match.group(1)), match.group(2)))
        position = match.end()
    return tags or None


def _header_revision(header: str) -> int | None:
    """The revision If-Match names; None for `*`. Raises on a malformed header."""
    if header.strip() == "*":
        return None
    tags = _parse_tags(header)
    if tags is None:
        raise Refusal("invalid_if_match", 'If-Match must be one quoted revision, e.g. "3".')
    if len(tags) != 1:
        raise Refusal("invalid_if_match", "If-Match must name exactly one revision, not a list.")
    tag = tags[0]
    if not _REVISION.fullmatch(tag.opaque):
        raise Refusal("invalid_if_match", 'If-Match must be one quoted revision, e.g. "3".')
    return NEVER_MATCHES if tag.weak else int(tag.opaque)


def _body_revision(value: Any) -> int:
    # JSON Schema's integer includes 3.0: what the schema admits, the server reads.
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REVISION:
        raise Refusal(
            "validation_error",
            "the request is not valid.",
            offenders=[
                Offender(
                    "/expected_revision", "type", "expected_revision must be a positive integer."
                )
            ],
        )
    return value


def expected_revision(
    request: Request, *, action: str, grounding_id: Any = None
) -> tuple[int, Any]:
    """The revision this mutation expects and the body without `expected_revision`.

    A refusal here happens before any service runs, so it is audited here: every
    operation, accepted or refused, leaves its audit event (ARCHITECTURE.md "Audit").
    """
    try:
        return _expected_revision(request)
    except Refusal as refusal:
        # Among the caller's Dimensions only: another tenant's link is filed under
        # none, by the same statement as an unknown id (API.md "Tenancy").
        dimension = (
            dimension_name_of(grounding_id, actor=request.user)
            if grounding_id is not None
            else None
        )
        audit_refusal(
            action,
            refusal.code,
            actor=request.user,
            grounding_id=grounding_id,
            dimension=dimension,
        )
        raise


def _expected_revision(request: Request) -> tuple[int, Any]:
    body = request.data
    from_body: int | None = None
    if isinstance(body, dict) and "expected_revision" in body:
        body = {k: v for k, v in body.items() if k != "expected_revision"}
        from_body = _body_revision(request.data["expected_revision"])
    header = request.headers.get("If-Match")
    from_header = _header_revision(header) if header is not None else None
    if from_header == NEVER_MATCHES:
        return NEVER_MATCHES, body
    if from_header is not None and from_body is not None and from_header != from_body:
        raise Refusal(
            "expected_revision_conflict",
            "If-Match and expected_revision name different revisions.",
        )
    chosen = from_header if from_header is not None else from_body
    if chosen is None:
        raise Refusal(
            "precondition_required",
            'name the revision you expect: If-Match: "<revision>" or expected_revision.',
        )
    return chosen, body


def none_match(request: Request, revision: int) -> bool:
    """If-None-Match (weak comparison) names the current revision, or is `*`."""
    header = request.headers.get("If-None-Match")
    if header is None:
        return False
    if header.strip() == "*":
        return True
    tags = _parse_tags(header) or []
    return any(tag.opaque == str(revision) for tag in tags)


def with_etag(response: Response, revision: int) -> Response:
    response["ETag"] = etag(revision)
    return response


def not_modified(revision: int) -> Response:
    return with_etag(Response(status=304), revision)


class ConditionalMixin:
    """For views of a link or an evidence set, on top of `common.web.views.ApiView`:
    responses carry the aggregate's ETag, mutations name the revision they expect."""

    request: Request

    def expected(self, *, grounding_id: Any = None) -> tuple[int, Any]:
        """`expected_revision` of this view's request, a refusal audited under the
        action of the operation it serves (`ApiView.served`)."""
        action = self.served.action  # type: ignore[attr-defined]
        return expected_revision(self.request, action=action, grounding_id=grounding_id)

    def tagged(self, response: Response, revision: int) -> Response:
        return with_etag(response, revision)
