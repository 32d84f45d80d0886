"""The W3C Web Annotation (JSON-LD) export of a disclosed projection.

Everything in the annotation comes from the disclosed projection: nothing the
disclosure decision withheld can reach it, because nothing is read from the
link's rows here. What the model cannot carry is either kept under the
`grounding:` extension namespace (retain-extension) or named in the loss report
(disclose-loss).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from common.kernel.canonical import canonical_sha256
from grounding.choices import DisplayState
from grounding.exports.canonical import (
    envelope,
    iri_for,
    is_absolute_iri,
    is_w3c_selector,
    link_revision_iri,
    loss,
    merge_loss_report,
    require_endpoints,
    role_map,
)
from grounding.models import GroundingLink

MEDIA_TYPE = 'application/ld+json; profile="http://www.w3.org/ns/anno.jsonld"'
ANNO_CONTEXT = "http://www.w3.org/ns/anno.jsonld"
VOCAB = "urn:grounding:vocab#"
# The W3C context stays first (assertion 3.1 looks for it as a value of @context);
# ours only adds a prefix, so it cannot redefine any term of the W3C context.
CONTEXT = [ANNO_CONTEXT, {"grounding": VOCAB}]
GENERATOR = {"id": "urn:grounding:registry", "type": "Software", "name": "grounding-registry"}
# "linking" (model §3.3.5: the body is a resource related to the target) states
# the relation and nothing more. "describing" would claim the passage describes the
# statement and "assessing" would be a judgment; the registry records, it never
# judges support, so judgments stay in the extension with their provenance.
MOTIVATION = "linking"


# RFC 8118 (application/pdf fragment identifiers), as the W3C model lists it for PDF.
PDF_FRAGMENT = "http://tools.ietf.org/rfc/rfc8118"
_PAGE = re.compile(r"#page=([1-9][0-9]*)")


def pdf_page(passage: dict[str, Any]) -> int | None:
    """The page number of a disclosed PDF page passage (its locator is its document's
    URL and "#page=N", docs/api.md "PDF evidence"); None for any other passage or
    when the locator is withheld."""
    binding = passage.get("source_revision_binding") or {}
    url, locator = passage.get("canonical_url"), passage.get("locator")
    if binding.get("media_type") != "application/pdf" or not url or not locator:
        return None
    found = _PAGE.fullmatch(locator[len(url) :]) if locator.startswith(url) else None
    return int(found.group(1)) if found and is_absolute_iri(url) else None


def _g(name: str) -> str:
    return f"grounding:{name}"


def build(projection: dict[str, Any], *, link: GroundingLink) -> dict[str, Any]:
    """The export body: the envelope plus `document` (the annotation)."""
    require_endpoints(projection, "web-annotation")
    fields = projection["fields"]
    withheld = set(projection["withheld"])
    statement = fields["statement"]
    passage = fields["passage"]
    anchor = fields.get("anchor") or {}
    roles = role_map(fields)
    entries: list[dict[str, str]] = []

    statement_resource: dict[str, Any] = {
        "type": "SpecificResource",
        "source": iri_for(statement["answer_revision_ref"], "answer"),
    }
    # The statement occurrence names the specific resource itself when it is an IRI.
    if is_absolute_iri(statement.get("statement_ref")):
        statement_resource["id"] = statement["statement_ref"]
    answer_selector = statement.get("answer_selector")
    if is_w3c_selector(answer_selector):
        statement_resource["selector"] = copy.deepcopy(answer_selector)
    elif answer_selector:
        entries.append(
            loss(
                "statement.answer_selector",
                "retain-extension",
                "not a W3C selector type; kept as grounding:answer_selector",
            )
        )

    passage_resource: dict[str, Any] = {
        "type": "SpecificResource",
        "source": iri_for(passage["passage_ref"], "passage"),
    }
    source_selector = anchor.get("source_selector")
    page = pdf_page(passage)
    if page is not None:
        # A PDF page: the PDF itself, the page by its RFC 8118 fragment, refined by the
        # text selectors (which count the page's text).
        passage_resource["source"] = passage["canonical_url"]
        passage_resource["selector"] = {
            "type": "FragmentSelector",
            "value": f"page={page}",
            "conformsTo": PDF_FRAGMENT,
        }
        if source_selector is not None and is_w3c_selector(source_selector):
            passage_resource["selector"]["refinedBy"] = copy.deepcopy(source_selector)
    elif source_selector is not None and is_w3c_selector(source_selector):
        passage_resource["selector"] = copy.deepcopy(source_selector)
    if source_selector is not None and not is_w3c_selector(source_selector):
        entries.append(
            loss(
                "anchor.selector.wsp_segment",
                "retain-extension",
                "the source selector (or a refinement) is not a W3C selector type "
                "(e.g. WspSegmentSelector); the body carries no selector and the "
                "selector is kept as grounding:source_selector",
            )
        )

    resources = {"statement": statement_resource, "passage": passage_resource}
    document: dict[str, Any] = {
        "@context": copy.deepcopy(CONTEXT),
        "id": link_revision_iri(projection["grounding_id"], projection["revision"]),
        "type": "Annotation",
        "motivation": MOTIVATION,
        "body": resources["statement" if roles["statement"] == "body" else "passage"],
        "target": resources["statement" if roles["statement"] == "target" else "passage"],
        "generator": dict(GENERATOR),
    }
    time = fields.get("time") or {}
    # `created` is when this registry created the record (observed_at); the time
    # the grounding was asserted upstream is kept in the extension. `generated` is
    # left out so the document is a pure function of (revision, disclosure).
    if time.get("observed_at"):
        document["created"] = time["observed_at"]
    # The creator is the record's accountable owner (a role ref, no personal
    # identity), which the projection discloses; the registering user is not in it.
    if fields.get("owner_ref"):
        document["creator"] = {
            "id": iri_for(fields["owner_ref"], "owner"),
            "name": fields["owner_ref"],
        }
    document[_g("state")] = _state(projection, fields, statement, passage, anchor, roles)
    entries += _format_losses(projection, fields, withheld)

    loss_report = merge_loss_report(
        projection["loss_report"],
        {
            "anchor.selector": "the passage resource carries no selector, only its source",
            "assessments.verdict": "grounding:displayed_verdict is omitted",
            "passage.locator": "grounding:locator is omitted",
            "passage.title": "grounding:title is omitted",
        },
        entries,
    )
    return envelope(
        projection,
        media_type=MEDIA_TYPE,
        loss_report=loss_report,
        export={"document": document},
        export_sha256=canonical_sha256(document),
        canonicalization="json-sorted-keys-utf8",
    )


def _state(
    projection: dict[str, Any],
    fields: dict[str, Any],
    statement: dict[str, Any],
    passage: dict[str, Any],
    anchor: dict[str, Any],
    roles: dict[str, str],
) -> dict[str, Any]:
    """The registry's distinctions, under our namespace; keys are prefixed so a
    JSON-LD processor expands them instead of dropping undefined terms."""
    state: dict[str, Any] = {
        _g("grounding_id"): projection["grounding_id"],
        _g("revision"): projection["revision"],
        _g("record_state"): fields.get("record_state"),
        _g("recheck_state"): fields.get("recheck_state"),
        _g("display_state"): projection["display_state"],
        _g("resolution_state"): passage.get("resolution_state"),
        _g("decision_ref"): projection["decision_ref"],
        _g("decision_refs"): list(projection.get("decision_refs") or []),
        _g("mapping_profile_ref"): projection.get("mapping_profile_ref"),
        _g("endpoint_role_map"): {_g(key): role for key, role in roles.items()},
        _g("statement_ref"): statement.get("statement_ref"),
        _g("answer_revision_ref"): statement.get("answer_revision_ref"),
        _g("passage_ref"): passage.get("passage_ref"),
        _g("selector_profile"): anchor.get("selector_profile"),
        _g("asserted_at"): (fields.get("time") or {}).get("asserted_at"),
        _g("withheld"): list(projection["withheld"]),
    }
    if "displayed_verdict" in fields:
        state[_g("displayed_verdict")] = fields["displayed_verdict"]
    support = fields.get("support")
    if support:
        state[_g("support_kind")] = support.get("support_kind")
        state[_g("use_basis")] = support.get("use_basis")
    for key in ("locator", "title"):
        if passage.get(key) is not None:
            state[_g(key)] = passage[key]
    if statement.get("answer_selector") and not is_w3c_selector(statement["answer_selector"]):
        state[_g("answer_selector")] = statement["answer_selector"]
    selector = anchor.get("source_selector")
    if selector is not None and not is_w3c_selector(selector):
        state[_g("source_selector")] = selector
    withdrawal = fields.get("withdrawal")
    if withdrawal:
        state[_g("withdrawal")] = {
            _g(key): withdrawal.get(key)
            for key in ("authority_ref", "scope", "decision_ref", "withdrawn_at")
        }
    return {key: value for key, value in state.items() if value is not None}


def _format_losses(
    projection: dict[str, Any], fields: dict[str, Any], withheld: set[str]
) -> list[dict[str, str]]:
    entries = [
        loss(
            "state",
            "retain-extension",
            "record_state, recheck_state, display_state, resolution_state, revision and "
            "decision_ref have no Web Annotation term; kept under grounding:state",
        ),
    ]
    if "support" not in withheld:
        entries += [
            loss(
                "support.support_kind",
                "retain-extension",
                "motivation 'linking' does not distinguish quotation, paraphrase, "
                "inferential or contextual support; kept as grounding:support_kind",
            ),
            loss(
                "support.use_basis",
                "retain-extension",
                "whether the passage was a recorded generation input or a post-generation "
                "citation has no Web Annotation term; kept as grounding:use_basis (the "
                "annotation itself asserts no generation use)",
            ),
            loss(
                "support.support_scope",
                "disclose-loss",
                "support_scope and support_limits are not carried",
            ),
        ]
    assessments = fields.get("assessments") or []
    verdict_note = (
        "grounding:displayed_verdict carries the selected verdict"
        if "displayed_verdict" in fields
        else "no verdict is carried"
    )
    entries.append(
        loss(
            "assessments",
            "disclose-loss",
            f"{len(assessments)} bound assessment(s): reviewers, methods, assessed inputs "
            f"and verdicts have no Web Annotation equivalent; {verdict_note}",
        )
    )
    if projection["display_state"] == DisplayState.DISPUTED or any(
        a.get("competing_assessment_refs") for a in assessments
    ):
        entries.append(
            loss(
                "assessment_disagreement",
                "disclose-loss",
                "current assessments disagree; only grounding:display_state says so, the "
                "competing assessments are not carried",
            )
        )
    sets = fields.get("evidence_sets") or []
    entries.append(
        loss(
            "evidence_sets",
            "disclose-loss",
            f"membership in {len(sets)} evidence set(s), member roles and set assessments "
            "are not representable; an annotation never implies set-level support",
        )
    )
    entries.append(
        loss(
            "anchor.anchor_result",
            "disclose-loss",
            "resolver observations (match counts, matches) are not carried; "
            "grounding:resolution_state is",
        )
    )
    if "passage.excerpt" not in withheld:
        entries.append(
            loss(
                "passage.excerpt",
                "disclose-loss",
                "the excerpt is not copied into the annotation; the body names the "
                "passage by reference and selector",
            )
        )
    if "statement" not in withheld:
        entries.append(
            loss(
                "statement.claim_scope",
                "disclose-loss",
                "claim_scope, answer_representation, rebind_requirement and "
                "finalization_binding are not carried",
            )
        )
    entries.append(
        loss(
            "time",
            "disclose-loss",
            "observed_at is carried as created and asserted_at as grounding:asserted_at; "
            "applicability_interval, review_due and time_uncertainty are not carried",
        )
    )
    if fields.get("withdrawal"):
        entries.append(
            loss(
                "withdrawal",
                "retain-extension",
                "the model has no withdrawal; kept as grounding:withdrawal (reason omitted) "
                "with grounding:display_state 'withdrawn'",
            )
        )
    return entries
