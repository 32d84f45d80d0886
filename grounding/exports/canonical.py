"""Helpers shared by the export formats: IRIs, canonical digests, loss entries and
the envelope every export returns.

The envelope keeps the native projection's identity, state and disclosure
members (grounding_id, revision, display_state, decision_ref, withheld, …) and
replaces the native `fields` with the format's own document, so an export never
carries more than the format shows plus what the loss report says it dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from django.utils.crypto import salted_hmac

from common.kernel.canonical import text_sha256
from common.kernel.refusals import Refusal

# RFC 3986 absolute IRI: a scheme, a colon and no whitespace. Refs supplied by
# clients are only used as IRIs when they already are; otherwise a URN is minted
# under our namespace so no export claims a malformed identifier.
_ABSOLUTE_IRI = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:[^\s<>\"{}|\\^`]+$")

# The selector types the W3C Web Annotation model defines (model §4.2).
W3C_SELECTOR_TYPES = frozenset(
    {
        "FragmentSelector",
        "CssSelector",
        "XPathSelector",
        "TextQuoteSelector",
        "TextPositionSelector",
        "DataPositionSelector",
        "SvgSelector",
        "RangeSelector",
    }
)

DEFAULT_ROLE_MAP = {"statement": "target", "passage": "body"}


def is_absolute_iri(value: Any) -> bool:
    return isinstance(value, str) and bool(_ABSOLUTE_IRI.match(value))


def iri_for(value: str, kind: str) -> str:
    """`value` when it is an absolute IRI, else a URN that quotes it."""
    if is_absolute_iri(value):
        return value
    return f"urn:grounding:{kind}:{quote(str(value), safe='')}"


def link_revision_iri(grounding_id: str, revision: int) -> str:
    return f"urn:grounding:{grounding_id}@{revision}"


def agent_iri(dimension: str, user_pk: Any) -> str:
    """An opaque IRI for an account acting in a Dimension (API.md "Tenancy": actor
    identities leave the registry only as opaque refs). A keyed digest of the
    Dimension and the account's key: stable across exports of that Dimension, it
    names no username and cannot be computed, or linked to the same account in
    another Dimension, without the deployment's secret key."""
    digest = salted_hmac(
        "grounding.exports.agent", f"{dimension}\n{user_pk}", algorithm="sha256"
    ).hexdigest()
    return f"urn:grounding:agent:{digest[:32]}"


def is_w3c_selector(selector: Any) -> bool:
    """A selector the Web Annotation model knows, refinements included."""
    if not isinstance(selector, dict) or selector.get("type") not in W3C_SELECTOR_TYPES:
        return False
    nested = [selector.get("refinedBy")]
    if selector.get("type") == "RangeSelector":
        nested += [selector.get("startSelector"), selector.get("endSelector")]
    return all(item is None or is_w3c_selector(item) for item in nested)


def role_map(fields: dict[str, Any]) -> dict[str, str]:
    """The link's endpoint_role_map, or the profile default when it is unusable.

    The roles are profile-defined (layer-projection); a map that does not give the
    two endpoints different roles cannot place them, so the default applies.
    """
    stored = (fields.get("projection") or {}).get("endpoint_role_map") or {}
    roles = {stored.get("statement"), stored.get("passage")}
    if roles == {"target", "body"}:
        return {"statement": stored["statement"], "passage": stored["passage"]}
    return dict(DEFAULT_ROLE_MAP)


def loss(distinction: str, disposition: str, detail: str) -> dict[str, str]:
    return {"distinction": distinction, "disposition": disposition, "detail": detail}


def merge_loss_report(
    native: Iterable[dict[str, str]],
    withheld_details: dict[str, str],
    entries: Iterable[dict[str, str]],
) -> list[dict[str, str]]:
    """The native withheld entries (with the format's consequence appended to their
    detail), then the format's own entries; one entry per distinction."""
    report: dict[str, dict[str, str]] = {}
    for entry in native:
        item = dict(entry)
        extra = withheld_details.get(item["distinction"])
        if extra:
            item["detail"] = f"{item['detail']}; {extra}"
        report[item["distinction"]] = item
    for entry in entries:
        report.setdefault(entry["distinction"], entry)
    return list(report.values())


def require_endpoints(projection: dict[str, Any], format: str) -> None:
    """Refuse an export whose endpoints are not disclosed.

    Both formats exist to state which statement occurrence the passage grounds;
    with the statement withheld the export would be a relation with a hidden end,
    so the loss is a `reject` (loss_report schema: the projection is refused).
    """
    fields = projection["fields"]
    missing = []
    if "statement" in projection["withheld"] or not fields.get("statement"):
        missing.append("statement")
    if not (fields.get("passage") or {}).get("passage_ref"):
        missing.append("passage.passage_ref")
    if missing:
        raise Refusal(
            "export_unrepresentable",
            f"the {format} export needs the link's endpoints; not disclosed: {', '.join(missing)}.",
            extra={
                "loss_report": [
                    loss(name, "reject", f"{format} cannot represent the link without it")
                    for name in missing
                ]
            },
        )


def ntriples_sha256(ntriples: str) -> str:
    """sha256 of sorted, de-duplicated N-Triples lines: a canonical form for graphs
    without blank nodes (the PROV export mints IRIs for every node)."""
    lines = sorted({line.strip() for line in ntriples.splitlines() if line.strip()})
    return text_sha256("\n".join(lines) + "\n")


def envelope(
    projection: dict[str, Any],
    *,
    media_type: str,
    loss_report: list[dict[str, str]],
    export: dict[str, Any],
    export_sha256: str,
    canonicalization: str,
) -> dict[str, Any]:
    body = {key: value for key, value in projection.items() if key != "fields"}
    body["loss_report"] = loss_report
    body["media_type"] = media_type
    body.update(export)
    body["export_sha256"] = export_sha256
    body["export_canonicalization"] = canonicalization
    return body


__all__ = [
    "DEFAULT_ROLE_MAP",
    "W3C_SELECTOR_TYPES",
    "agent_iri",
    "envelope",
    "iri_for",
    "is_absolute_iri",
    "is_w3c_selector",
    "link_revision_iri",
    "loss",
    "merge_loss_report",
    "ntriples_sha256",
    "require_endpoints",
    "role_map",
]
