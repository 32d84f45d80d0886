"""Validation of operation inputs by group (statement, passage, anchor, support,
time), reporting every offender with a JSON pointer. Structured values go through
the shipped JSON Schemas (and the profile's stricter ones)."""

from __future__ import annotations

import json
from typing import Any

from grounding.choices import RebindRequirement, ReviewerKind, SupportKind, UseBasis, Verdict
from grounding.values import structured
from grounding.values.timestamps import parse_rfc3339
from policies.kernel.refusals import Offender, pointer_join
from policies.models import Profile

STATEMENT_FIELDS = {
    "statement_ref": "ref",
    "answer_revision_ref": "ref",
    "answer_revision_provisional": "bool",
    "answer_selector": "selector",
    "answer_representation": "answer_representation",
    "claim_scope": "claim_scope",
    "finalization_binding": "opt_ref",
    "rebind_requirement": "rebind_requirement",
}
STATEMENT_REQUIRED = (
    "statement_ref",
    "answer_revision_ref",
    "answer_selector",
    "answer_representation",
    "claim_scope",
)
PASSAGE_FIELDS = {
    "passage_id": "ref",
    "passage_ref": "ref",
    "source_revision_binding": "source_revision_binding",
    "retrieval_observation_ref": "opt_ref",
    "representation_check": "representation_check",
}
ANCHOR_FIELDS = {
    "source_selector": "selector",
    "selector_profile": "ref",
    "context_ref": "opt_ref",
    "transformation_ref": "opt_ref",
}
ANCHOR_REQUIRED = ("source_selector", "selector_profile")
SUPPORT_FIELDS = {
    "support_kind": "support_kind",
    "support_scope": "support_scope",
    "support_limits": "support_limits",
    "use_basis": "use_basis",
    "generation_evidence_ref": "opt_ref",
}
SUPPORT_REQUIRED = ("support_kind", "support_scope")
TIME_FIELDS = {
    "asserted_at": "datetime",
    "applicability_interval": "applicability_interval",
    "statement_time_ref": "opt_ref",
    "review_due": "datetime",
    "time_uncertainty": "time_uncertainty",
}

# Values listed once: TextChoices.values builds a new list on every access.
_ENUMS: dict[str, list[str]] = {
    name: choices.values
    for name, choices in (
        ("support_kind", SupportKind),
        ("use_basis", UseBasis),
        ("rebind_requirement", RebindRequirement),
        ("reviewer_kind", ReviewerKind),
        ("verdict", Verdict),
    )
}


def validate_group(
    group: str,
    value: Any,
    *,
    fields: dict[str, str],
    required: tuple[str, ...] = (),
    profile: Profile | None = None,
    pointer: str | None = None,
) -> list[Offender]:
    """Check one group: an object, no unknown keys, required keys present, values typed."""
    base = pointer if pointer is not None else f"/{group}"
    if not isinstance(value, dict):
        return [Offender(base, "type", f"{group} must be an object.")]
    offenders = [
        Offender(pointer_join(base, key), "unknown_field", f"{group} has no field {key!r}.")
        for key in value
        if key not in fields
    ]
    offenders += [
        Offender(pointer_join(base, key), "required", f"{key} is required.")
        for key in required
        if value.get(key) in (None, "")
    ]
    for key, kind in fields.items():
        if key in value and value[key] is not None:
            offenders += _check_value(key, kind, value[key], pointer_join(base, key), profile)
    return offenders


def _check_value(key: str, kind: str, value: Any, pointer: str, profile) -> list[Offender]:
    if kind in ("ref", "opt_ref"):
        if not isinstance(value, str) or (kind == "ref" and not value.strip()):
            return [Offender(pointer, "type", f"{key} must be a non-empty string.")]
        if len(value) > 512:
            return [Offender(pointer, "max_length", f"{key} is longer than 512 characters.")]
        return []
    if kind == "bool":
        return [] if isinstance(value, bool) else [Offender(pointer, "type", "must be a boolean.")]
    if kind == "datetime":
        if not isinstance(value, str) or parse_rfc3339(value) is None:
            return [Offender(pointer, "format", f"{key} must be an RFC 3339 date-time.")]
        return []
    if kind in _ENUMS:
        allowed = _ENUMS[kind]
        if value not in allowed:
            return [Offender(pointer, "enum", f"{key} must be one of {', '.join(allowed)}.")]
        return []
    profile_schema = (profile.field_schemas or {}).get(key) if profile else None
    return structured.validate(kind, value, pointer=pointer, profile_schema=profile_schema)


def check_profile_vocabulary(
    *, profile: Profile, support: dict | None, anchor: dict | None
) -> list[Offender]:
    """The pinned profile decides which support kinds and selector profiles are admitted."""
    offenders = []
    kind = (support or {}).get("support_kind")
    # A value outside the vocabulary altogether is reported once, as an enum error.
    known = kind in _ENUMS["support_kind"]
    if known and profile.support_vocabulary and kind not in profile.support_vocabulary:
        offenders.append(
            Offender(
                "/support/support_kind",
                "not_in_profile",
                f"profile {profile.ref} does not admit this support_kind.",
            )
        )
    selector_profile = (anchor or {}).get("selector_profile")
    if (
        selector_profile
        and profile.selector_profiles
        and selector_profile not in profile.selector_profiles
    ):
        offenders.append(
            Offender(
                "/anchor/selector_profile",
                "not_in_profile",
                f"profile {profile.ref} does not admit this selector_profile.",
            )
        )
    return offenders


def check_use_basis(support: dict | None, *, pointer: str = "/support") -> list[Offender]:
    """Generation use is recorded, never inferred: it needs a generation trace reference."""
    support = support or {}
    if support.get("use_basis") == UseBasis.GENERATION_INPUT and not support.get(
        "generation_evidence_ref"
    ):
        return [
            Offender(
                pointer_join(pointer, "generation_evidence_ref"),
                "generation_evidence_required",
                "use_basis generation_input needs a recorded generation_evidence_ref.",
            )
        ]
    return []


def check_string(
    payload: dict[str, Any],
    key: str,
    *,
    pointer: str,
    max_length: int | None = None,
    required: bool = False,
) -> list[Offender]:
    """A top-level string member: its type, presence and the column's length, checked
    before any write (the database would refuse it with a 500 otherwise)."""
    at = pointer_join(pointer, key)
    value = payload.get(key)
    if value is None or (value == "" and not required):
        return [Offender(at, "required", f"{key} is required.")] if required else []
    if not isinstance(value, str):
        return [Offender(at, "type", f"{key} must be a string.")]
    if required and not value.strip():
        return [Offender(at, "required", f"{key} is required.")]
    if max_length is not None and len(value) > max_length:
        return [Offender(at, "max_length", f"{key} is longer than {max_length} characters.")]
    return []


def value_size_offenders(value: Any, pointer: str) -> list[Offender]:
    """A JSON value stored without a schema, bounded like every structured value."""
    try:
        size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
    except (TypeError, ValueError, RecursionError):
        return [Offender(pointer, "type", "must be a JSON value.")]
    limit = structured.max_value_bytes()
    if size > limit:
        return [Offender(pointer, "value.too_large", f"larger than {limit} bytes as JSON")]
    return []
