"""Typed refusals: every operation either applies in full or raises one of these.

The API layer maps `code` to an HTTP status in one place
(`common.web.errors`); services never know about HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Offender:
    """One reason a piece of input was refused, located by a JSON pointer."""

    pointer: str
    code: str
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"pointer": self.pointer, "code": self.code, "detail": self.detail}


@dataclass
class Refusal(Exception):
    """An operation refused with a stable code; nothing was changed."""

    code: str
    detail: str
    offenders: list[Offender] = field(default_factory=list)
    # Extra members safe to show the caller (for example current_revision).
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(f"{self.code}: {self.detail}")

    def __str__(self) -> str:
        return f"{self.code}: {self.detail}"


def pointer_join(base: str, *parts: str | int) -> str:
    """Append RFC 6901 reference tokens to a JSON pointer."""
    out = base
    for part in parts:
        token = str(part).replace("~", "~0").replace("/", "~1")
        out = f"{out}/{token}"
    return out


# HTTP status for each stable refusal code. The API's exception handler reads this;
# a code not listed here is a 409 (the request conflicts with the record's state), but
# every code an operation declares must be listed (policies.operations.Operation).
STATUS_BY_CODE: dict[str, int] = {
    "validation_error": 400,
    "body_too_deep": 400,
    "expected_revision_conflict": 400,
    "invalid_if_match": 400,
    "unknown_reference": 400,
    "format_unavailable": 400,
    "role_required": 403,
    "disclosure_not_decided": 403,
    "recipient_reserved": 403,
    "operator_required": 403,
    "dimension_required": 400,
    "not_found": 404,
    "revision_mismatch": 412,
    "precondition_required": 428,
    # The admin sign-in of a locked-out username and address (policies/lockout.py).
    "login_locked_out": 429,
    "wsp_contract_violation": 422,
    "banned_field": 422,
    # PDF evidence: bytes that are no readable PDF, and an upload over the limit.
    "invalid_pdf": 422,
    "too_large": 413,
    "profile_not_published": 409,
    "dimension_inactive": 409,
    "assessment_input_mismatch": 409,
    "link_withdrawn": 409,
    "link_disposed": 409,
    # The disposal journal (outside the database) cannot be written: retry later.
    "disposal_journal_unavailable": 503,
    "execution_conflict": 409,
    "master_ref_conflict": 409,
    "integrity_conflict": 409,
    "change_conflict": 409,
    "assessment_duplicate": 409,
    "anchor_input_mismatch": 409,
    "anchor_text_unavailable": 409,
    "no_change": 409,
    "evidence_set_exists": 409,
    "member_exists": 409,
    "not_a_member": 409,
    "decision_exists": 409,
    "decision_revoked": 409,
    "profile_not_draft": 409,
    # The event feed (feed.stream, feed.services): a forged or stale stream cursor, a
    # replay asked of a webhook that is turned off.
    "invalid_cursor": 400,
    "webhook_inactive": 409,
    "export_unrepresentable": 422,
    # Idempotency keys (common.web.idempotency, API.md "Retries and idempotency").
    "invalid_idempotency_key": 400,
    "idempotency_key_reuse": 422,
    "idempotency_in_progress": 409,
    # A keyed retry whose stored first answer named a link since disposed (purged).
    "answer_disposed": 410,
}


def status_for(code: str) -> int:
    return STATUS_BY_CODE.get(code, 409)
