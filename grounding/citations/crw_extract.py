"""crw evidence primitives (crw-core `evidence`), read as crw serializes them
(camelCase): extraction `Basis` here, search `SourceEvidence` in crw_search.

`crw-extract`: `payload` = `{"basis": [Basis, …], …}` (other members ignored).
One entry per basis item; its `FieldStatus` contract is enforced as crw states it,
and a basis that breaks it refuses the whole request (400, pointers into the item):

| status | `value` | `citations` | `citations[0].excerpt` |
| --- | --- | --- | --- |
| supported | non-null | exactly 1 | present, non-empty |
| unverified | non-null | exactly 1 | absent (or null) |
| unsupported | non-null | [] | n/a |
| notFound | null | [] | n/a |

`value` and `citations` must be present: an absent key means unknown, not none.
`basisVersion` other than 1 is refused; so are offsets (`charStart`/`charEnd`),
which basis v1 never emits, and a non-scalar value (basis covers top-level scalar
properties only). The statement is the field itself, named by a JSON pointer
(`/<field>`), not a text span; its claim is `<field> = <value as JSON>`.
- supported: the anchor is a TextQuoteSelector on the excerpt; the service runs
  the reference resolver on the passage text (contained ⇒ resolved, repeated ⇒
  ambiguous, absent ⇒ unresolved; never retargeted) after checking `sourceHash`
  when it covers text the registry holds (`sourceTextKind` "markdown").
- unverified: the document is attributable, the span is not: a locator-only
  anchor (`locator=crw_evidence_citation`), no span invented.
- unsupported, notFound: no link; reported per field (`basis_unsupported`,
  `basis_not_found`).
`confidence` and `reasoning` are carried as data, never as a verdict.

Passages are keyed by the citation's `url`.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from common.kernel.refusals import Offender, pointer_join
from evidence.offsets import nfc
from grounding.citations import (
    Citation,
    OffsetUnit,
    Parsed,
    is_int,
    locator_selector,
    require_list,
    require_str,
)

FORMAT = "crw-extract"

BASIS_VERSION = 1
STATUSES = ("supported", "unverified", "unsupported", "notFound")
CONFIDENCE_LEVELS = ("low", "medium", "high")
UNVERIFIED_LOCATOR = "crw_evidence_citation"
# RFC 3986 fragment characters a JSON pointer may keep unescaped.
_FRAGMENT_SAFE = "/~!$&'()*+,;=:@"


def _contract(pointer: str, key: str, detail: str) -> Offender:
    return Offender(pointer_join(pointer, key), "basis_contract", detail)


def parse(
    payload: Any, *, pointer: str = "/payload", offset_unit: OffsetUnit | None = None
) -> Parsed:
    """Basis items ⇒ citations; every FieldStatus contract violation as an offender."""
    result = Parsed(media_type="application/json")
    offenders = result.offenders
    if not isinstance(payload, dict):
        offenders.append(Offender(pointer or "/", "type", "the payload must be an object."))
        return result
    items = require_list(payload, "basis", pointer, offenders)
    seen: set[str] = set()
    for i, item in enumerate(items or []):
        where = pointer_join(pointer, "basis", i)
        before = len(offenders)
        fields = _basis(item, where, offenders)
        if fields is None or len(offenders) != before:
            continue
        if fields["data"]["field"] in seen:
            offenders.append(
                Offender(pointer_join(where, "field"), "duplicate", "field is given twice.")
            )
            continue
        seen.add(fields["data"]["field"])
        result.citations.append(
            Citation(
                index=len(result.citations),
                pointer=where,
                container={"basis_index": i},
                raw=item,
                **fields,
            )
        )
    return result


def _basis(item: Any, pointer: str, offenders: list[Offender]) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        offenders.append(Offender(pointer, "type", "a basis item must be an object."))
        return None
    before = len(offenders)
    version = item.get("basisVersion")
    if version is None:
        offenders.append(
            Offender(pointer_join(pointer, "basisVersion"), "required", "basisVersion is required.")
        )
    elif not is_int(version) or version != BASIS_VERSION:
        offenders.append(
            Offender(
                pointer_join(pointer, "basisVersion"),
                "unsupported_version",
                f"only basisVersion {BASIS_VERSION} is read here.",
            )
        )
    name = require_str(item, "field", pointer, offenders)
    status = item.get("status")
    if status not in STATUSES:
        code = "required" if status is None else "enum"
        offenders.append(
            Offender(
                pointer_join(pointer, "status"),
                code,
                f"status must be one of {', '.join(STATUSES)}.",
            )
        )
    for key in ("value", "citations"):
        if key not in item:
            offenders.append(
                Offender(
                    pointer_join(pointer, key),
                    "required",
                    f"{key} must be present: absent means unknown.",
                )
            )
    value = item.get("value")
    if isinstance(value, dict | list):
        offenders.append(
            Offender(pointer_join(pointer, "value"), "type", "basis covers scalar values only.")
        )
    citations = item.get("citations")
    if "citations" in item and not isinstance(citations, list):
        offenders.append(
            Offender(pointer_join(pointer, "citations"), "type", "citations is a list.")
        )
        citations = None
    data: dict[str, Any] = {"field": name, "status": status}
    confidence = item.get("confidence")
    if confidence is not None:
        if confidence in CONFIDENCE_LEVELS:
            data["confidence"] = confidence
        else:
            offenders.append(
                Offender(
                    pointer_join(pointer, "confidence"),
                    "enum",
                    f"confidence must be one of {', '.join(CONFIDENCE_LEVELS)}.",
                )
            )
    reasoning = require_str(item, "reasoning", pointer, offenders, optional=True)
    if reasoning is not None:
        data["reasoning"] = reasoning
    cited = [
        _evidence(c, pointer_join(pointer, "citations", j), offenders)
        for j, c in enumerate(citations or [])
    ]
    if status in STATUSES and "value" in item and citations is not None:
        _check_status(status, value, cited, pointer, offenders)
    if len(offenders) != before:
        return None
    return _basis_fields(name, status, value, cited[0] if cited else None, data)


def _evidence(item: Any, pointer: str, offenders: list[Offender]) -> dict[str, Any] | None:
    """One EvidenceCitation: url, sourceHash and sourceTextKind are required."""
    if not isinstance(item, dict):
        offenders.append(Offender(pointer, "type", "a citation must be an object."))
        return None
    before = len(offenders)
    out = {
        "url": require_str(item, "url", pointer, offenders),
        "sourceHash": require_str(item, "sourceHash", pointer, offenders),
        "sourceTextKind": require_str(item, "sourceTextKind", pointer, offenders),
        "title": require_str(item, "title", pointer, offenders, optional=True),
        "excerpt": item.get("excerpt"),
    }
    if out["excerpt"] is not None and not isinstance(out["excerpt"], str):
        offenders.append(Offender(pointer_join(pointer, "excerpt"), "type", "excerpt is a string."))
    for key in ("charStart", "charEnd"):
        if item.get(key) is not None:
            offenders.append(_contract(pointer, key, "basis v1 carries no offsets."))
    return out if len(offenders) == before else None


def _check_status(
    status: str, value: Any, cited: list, pointer: str, offenders: list[Offender]
) -> None:
    """The FieldStatus table, row by row."""
    if status == "notFound":
        if value is not None:
            offenders.append(_contract(pointer, "value", "notFound means value is null."))
    elif value is None:
        offenders.append(_contract(pointer, "value", f"{status} needs a non-null value."))
    if status in ("unsupported", "notFound"):
        if cited:
            offenders.append(_contract(pointer, "citations", f"{status} carries no citation."))
        return
    if len(cited) != 1:
        offenders.append(_contract(pointer, "citations", f"{status} carries exactly one citation."))
        return
    if cited[0] is None:
        return  # malformed, and reported as such
    excerpt = cited[0]["excerpt"]
    at = pointer_join(pointer, "citations", 0)
    if status == "supported" and not excerpt:
        offenders.append(_contract(at, "excerpt", "supported needs the excerpt."))
    if status == "unverified" and excerpt is not None:
        offenders.append(_contract(at, "excerpt", "unverified carries no excerpt."))


def _basis_fields(
    name: str, status: str, value: Any, cited: dict | None, data: dict[str, Any]
) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "type": status,
        "statement_pointer": quote(
            "/" + name.replace("~", "~0").replace("/", "~1"), safe=_FRAGMENT_SAFE
        ),
        # The answer's own value, as the claim of that field; never rewritten.
        "proposition": f"{name} = {json.dumps(value, ensure_ascii=False)}",
        "data": data,
    }
    if status == "unsupported":
        return {**fields, "skip_reason": "basis_unsupported"}
    if status == "notFound":
        return {**fields, "skip_reason": "basis_not_found"}
    fields.update(
        document_key=cited["url"],
        title=cited["title"],
        source_hash=cited["sourceHash"],
        source_text_kind=cited["sourceTextKind"],
    )
    data.update(source_hash=cited["sourceHash"], source_text_kind=cited["sourceTextKind"])
    if status == "supported":
        fields.update(
            source_selector={"type": "TextQuoteSelector", "exact": nfc(cited["excerpt"])},
            cited_text=cited["excerpt"],
            resolve=True,
            support_kind="quotation",
        )
    else:
        fields.update(
            source_selector=locator_selector(UNVERIFIED_LOCATOR),
            source_note="crw established the document, not the span",
        )
    return fields
