"""The rules of an operation's input beyond each member's own check
(`grounding.services.inputs`): what the pinned profile admits, what a generation
use needs, a top-level string's presence and length, and the size of a value stored
without a schema. Each reports its offenders with JSON pointers."""

from __future__ import annotations

import json
from typing import Any

from common.kernel.refusals import Offender, pointer_join
from grounding.choices import SupportKind, UseBasis
from grounding.values import structured
from policies.models import Profile

# A tuple, not a set: a wrong-typed support_kind (an object, a list) is no member,
# where a set would raise on hashing it.
_SUPPORT_KINDS = tuple(SupportKind.values)


def check_profile_vocabulary(
    *, profile: Profile, support: dict | None, anchor: dict | None
) -> list[Offender]:
    """The pinned profile decides which support kinds and selector profiles are admitted."""
    offenders = []
    kind = (support or {}).get("support_kind")
    # A value outside the vocabulary altogether is reported once, as an enum error.
    known = kind in _SUPPORT_KINDS
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
