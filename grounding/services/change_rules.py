"""What a change notification may say, judged before anything is locked or written:
a posted body's members (the kinds a client may post, an RFC 3339 `observed_at`),
each value's length and shape (a source's subject a URI, any other kind's a ref
without white space), and the digest of what it says, which tells a replay from a
conflicting body. Both ways a notification comes in are judged by these (a posted
body, and a WSP import's source changes: `grounding.services.changes`, which records
and fans out), and the OpenAPI description states the same shapes
(`grounding.bodies`, `grounding.api.openapi_rules`)."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC
from typing import Any

from common.kernel.refusals import Offender
from common.kernel.text import storable
from grounding.choices import ChangeKind
from grounding.services import inputs
from grounding.services._common import refuse_invalid
from grounding.values.timestamps import parse_rfc3339

NOTIFICATION = inputs.CHANGE_NOTIFICATION
# Kinds a client may post; review deadlines are swept by `recheck_due`.
POSTED_KINDS = tuple(NOTIFICATION.choices("kind"))
_POSTED = {str(k) for k in POSTED_KINDS}
# A URI: scheme ":" and no white space or control character.
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:[^\s\x00-\x1f\x7f]+$")
_HTTP = re.compile(r"^https?://[^/?#\s]+", re.IGNORECASE)
_REF = re.compile(r"^[^\s\x00-\x1f\x7f]+$")


def posted_values(payload: dict[str, Any]) -> dict[str, Any]:
    """A posted body's values but its Dimension (`observed_at` parsed), or Refusal
    `validation_error` naming every offender, in pointer order."""
    offenders = NOTIFICATION.unknown(payload)
    values = {key: payload.get(key) for key in NOTIFICATION.names if key != "dimension"}
    observed = values["observed_at"]
    if observed is None:
        offenders.append(Offender("/observed_at", "required", "observed_at is required."))
    elif not isinstance(observed, str) or parse_rfc3339(observed) is None:
        offenders.append(
            Offender("/observed_at", "format", "observed_at must be an RFC 3339 date-time.")
        )
    else:
        values["observed_at"] = parse_rfc3339(observed)
    kind = values["kind"]
    if kind is None:
        offenders.append(Offender("/kind", "required", "kind is required."))
    elif not isinstance(kind, str) or kind not in _POSTED:
        offenders.append(
            Offender("/kind", "enum", "kind must be source, answer, policy or assessment.")
        )
    offenders += value_offenders(values, pointer_base="", check_kind=False)
    refuse_invalid(sorted(offenders, key=lambda o: o.pointer))
    return values


def value_offenders(
    values: dict[str, Any], *, pointer_base: str, check_kind: bool = True
) -> list[Offender]:
    """Each value's length and shape, as a posted body's and a WSP import's
    notifications share them (`check_kind`: whether `kind` is judged here too)."""
    offenders = []
    for key, limit in (("change_ref", 512), ("reason", 4000)):
        value = values.get(key)
        if not isinstance(value, str) or not value.strip():
            offenders.append(
                Offender(f"{pointer_base}/{key}", "required", f"{key} must be a non-empty string.")
            )
        elif len(value) > limit or not storable(value):
            offenders.append(
                Offender(f"{pointer_base}/{key}", "max_length", f"{key} cannot be stored.")
            )
    if isinstance(values.get("change_ref"), str) and not _REF.match(values["change_ref"]):
        offenders.append(
            Offender(f"{pointer_base}/change_ref", "format", "change_ref holds no white space.")
        )
    kind = values.get("kind")
    if check_kind and kind not in _POSTED:
        offenders.append(Offender(f"{pointer_base}/kind", "enum", "unknown kind."))
    subject = values.get("subject_ref")
    problem = _subject_problem(kind, subject)
    if problem:
        offenders.append(Offender(f"{pointer_base}/subject_ref", *problem))
    return offenders


def _subject_problem(kind: Any, subject: Any) -> tuple[str, str] | None:
    if not isinstance(subject, str) or not subject:
        return "required", "subject_ref must be a non-empty string."
    if not storable(subject):
        return "format", "subject_ref cannot be stored."
    if kind == ChangeKind.SOURCE:
        if len(subject) > 2048 or not _URI.match(subject):
            return "subject_shape", "a source subject is a canonical URL or a passage ref."
        if subject.lower().startswith(("http:", "https:")) and not _HTTP.match(subject):
            return "subject_shape", "a canonical URL needs a host."
        return None
    if len(subject) > 512 or not _REF.match(subject):
        names = {
            ChangeKind.ANSWER: "an answer_revision_ref",
            ChangeKind.POLICY: "a policy ref",
            ChangeKind.ASSESSMENT: "an assessment_ref",
        }
        return "subject_shape", f"the subject is {names.get(kind, 'a ref')} without white space."
    return None


def body_sha256(values: dict[str, Any]) -> str:
    """The digest of what a notification says; change_ref and Dimension are its key."""
    observed = values.get("observed_at")
    body = {
        "kind": str(values["kind"]),
        "subject_ref": values["subject_ref"],
        "observed_at": observed.astimezone(UTC).isoformat() if observed else None,
        "reason": values["reason"],
    }
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
