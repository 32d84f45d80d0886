"""The PROV-O export: who did what to a grounding link, and when, as an RDF graph
built with rdflib and serialized as Turtle and JSON-LD.

The revisions and their activities come from the link's history rows and its
append-only records (read only). Endpoint content comes from the disclosed
projection only: a withheld selector, verdict or reviewer never enters the graph.
The accounts that acted appear only as opaque agent IRIs (never a username), and
only when the decision discloses `assessments.reviewer`.
Every node gets an IRI (no blank nodes) so the graph has a canonical N-Triples
form to hash.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rdflib import RDF, XSD, Graph, Literal, Namespace, URIRef
from rdflib.namespace import PROV

from common.kernel.canonical import canonical_json
from grounding.choices import ReviewerKind, SupportKind, UseBasis
from grounding.exports.canonical import (
    agent_iri,
    envelope,
    iri_for,
    link_revision_iri,
    loss,
    merge_loss_report,
    ntriples_sha256,
    require_endpoints,
)
from grounding.models import AnchorObservation, Assessment, Disposal, GroundingLink, Withdrawal

G = Namespace("urn:grounding:vocab#")
MEDIA_TYPE = "text/turtle"
JSONLD_MEDIA_TYPE = "application/ld+json"
SHAPES_PATH = Path(__file__).parent / "shapes" / "prov_shapes.ttl"
# An inline context: parsing the JSON-LD back never needs the network.
JSONLD_CONTEXT = {
    "prov": str(PROV),
    "grounding": str(G),
    "xsd": str(XSD),
    "rdf": str(RDF),
}


@dataclass
class _Records:
    """Append-only rows of the link up to the exported revision, by revision."""

    assessments: dict[int, list[Assessment]] = field(default_factory=dict)
    withdrawal: Withdrawal | None = None
    observations: set[int] = field(default_factory=set)
    disposal: Disposal | None = None


def build(projection: dict[str, Any], *, link: GroundingLink) -> dict[str, Any]:
    """The export body: the envelope plus `turtle` and `jsonld`."""
    require_endpoints(projection, "prov-o")
    graph = prov_graph(projection, link=link)
    turtle = graph.serialize(format="turtle")
    jsonld = json.loads(
        graph.serialize(format="json-ld", context=JSONLD_CONTEXT, auto_compact=True)
    )
    return envelope(
        projection,
        media_type=MEDIA_TYPE,
        loss_report=merge_loss_report(
            projection["loss_report"],
            {
                "anchor.selector": "the passage entity carries no grounding:sourceSelector",
                "assessments.reviewer": "activities carry no agent and "
                "assessments no prov:wasAttributedTo",
                "assessments.verdict": "assessments carry no grounding:verdict",
            },
            _format_losses(projection),
        ),
        export={"turtle": turtle, "jsonld": jsonld, "jsonld_media_type": JSONLD_MEDIA_TYPE},
        export_sha256=ntriples_sha256(graph.serialize(format="nt")),
        canonicalization="n-triples-sorted-utf8",
    )


def prov_graph(projection: dict[str, Any], *, link: GroundingLink) -> Graph:
    fields = projection["fields"]
    withheld = set(projection["withheld"])
    gid = projection["grounding_id"]
    current = projection["revision"]
    graph = Graph()
    graph.bind("prov", PROV)
    graph.bind("grounding", G)
    graph.bind("xsd", XSD)

    link_node = URIRef(f"urn:grounding:{gid}")
    _types(graph, link_node, PROV.Entity, G.GroundingLink)
    statement, statement_bound = _statement(graph, fields["statement"])
    passage, passage_bound = _passage(graph, fields["passage"], fields.get("anchor") or {})
    records = _records(link, current)
    reviewer_disclosed = "assessments.reviewer" not in withheld
    verdict_disclosed = "assessments.verdict" not in withheld

    for revision, row in _revision_rows(link, current):
        node = URIRef(link_revision_iri(gid, revision))
        _types(graph, node, PROV.Entity, G.LinkRevision)
        graph.add((node, G.revision, Literal(revision, datatype=XSD.integer)))
        graph.add((node, PROV.specializationOf, link_node))
        activity = URIRef(f"urn:grounding:activity:{gid}@{revision}")
        kind = _kind(revision, records)
        _types(graph, activity, PROV.Activity, kind)
        graph.add((node, PROV.wasGeneratedBy, activity))
        graph.add((activity, PROV.endedAtTime, Literal(row.history_date, datatype=XSD.dateTime)))
        graph.add((activity, G.producedRevision, Literal(revision, datatype=XSD.integer)))
        if revision > 1:
            previous = URIRef(link_revision_iri(gid, revision - 1))
            graph.add((node, PROV.wasRevisionOf, previous))
            graph.add((activity, PROV.used, previous))
        # The activity that bound an endpoint used it (only the current, disclosed
        # endpoints are described; earlier bindings are not in the projection).
        if revision == statement_bound:
            graph.add((activity, PROV.used, statement))
        if revision == passage_bound:
            graph.add((activity, PROV.used, passage))
        # The accounts that acted (the one that bound an assessment is the
        # reviewer's) leave the registry only as opaque refs, and only when the
        # decision discloses reviewers (API.md "Tenancy").
        if reviewer_disclosed and row.history_user_id is not None:
            agent = URIRef(agent_iri(link.dimension.name, row.history_user_id))
            _types(graph, agent, PROV.Agent)
            graph.add((activity, PROV.wasAssociatedWith, agent))
        for assessment in records.assessments.get(revision, []):
            _assessment(graph, gid, activity, assessment, reviewer_disclosed, verdict_disclosed)
        if records.withdrawal and records.withdrawal.recorded_revision == revision:
            withdrawn = records.withdrawal
            before = URIRef(link_revision_iri(gid, withdrawn.grounding_revision))
            graph.add((before, PROV.wasInvalidatedBy, activity))
            graph.add((activity, G.authorityRef, Literal(withdrawn.authority_ref)))
            graph.add((activity, G.withdrawalScope, Literal(withdrawn.scope)))

    node = URIRef(link_revision_iri(gid, current))
    _types(graph, node, PROV.Entity, G.LinkRevision, G.ProjectedRevision)
    graph.add((node, G.revision, Literal(current, datatype=XSD.integer)))
    graph.add((node, G.statementOccurrence, statement))
    graph.add((node, G.passageRevision, passage))
    graph.add((node, PROV.wasDerivedFrom, statement))
    graph.add((node, PROV.wasDerivedFrom, passage))
    _state(graph, node, projection)
    support = fields.get("support") or {}
    if _quotes(support):
        graph.add((statement, PROV.wasQuotedFrom, passage))
    return graph


def _types(graph: Graph, node: URIRef, *classes: URIRef) -> None:
    for cls in classes:
        graph.add((node, RDF.type, cls))


def _json(value: Any) -> Literal:
    return Literal(canonical_json(value), datatype=RDF.JSON)


def _statement(graph: Graph, statement: dict[str, Any]) -> tuple[URIRef, int | None]:
    node = URIRef(iri_for(statement["statement_ref"], "statement"))
    _types(graph, node, PROV.Entity, G.StatementOccurrence)
    graph.add((node, G.statementRef, Literal(statement["statement_ref"])))
    answer = URIRef(iri_for(statement["answer_revision_ref"], "answer"))
    _types(graph, answer, PROV.Entity, G.AnswerRevision)
    graph.add((node, G.answerRevision, answer))
    if statement.get("answer_selector"):
        graph.add((node, G.answerSelector, _json(statement["answer_selector"])))
    return node, statement.get("bound_in_revision")


def _passage(
    graph: Graph, passage: dict[str, Any], anchor: dict[str, Any]
) -> tuple[URIRef, int | None]:
    node = URIRef(iri_for(passage["passage_ref"], "passage"))
    _types(graph, node, PROV.Entity, G.PassageRevision)
    graph.add((node, G.passageRef, Literal(passage["passage_ref"])))
    for key, prop in (
        ("locator", G.locator),
        ("title", G.title),
        ("access_label", G.accessLabel),
        ("resolution_state", G.resolutionState),
    ):
        if passage.get(key) is not None:
            graph.add((node, prop, Literal(passage[key])))
    if anchor.get("source_selector") is not None:
        graph.add((node, G.sourceSelector, _json(anchor["source_selector"])))
    if anchor.get("selector_profile"):
        graph.add((node, G.selectorProfile, Literal(anchor["selector_profile"])))
    return node, passage.get("bound_in_revision")


def _state(graph: Graph, node: URIRef, projection: dict[str, Any]) -> None:
    fields = projection["fields"]
    values = {
        G.recordState: fields.get("record_state"),
        G.recheckState: fields.get("recheck_state"),
        G.displayState: projection["display_state"],
        G.displayedVerdict: fields.get("displayed_verdict"),
        G.mappingProfileRef: projection.get("mapping_profile_ref"),
    }
    support = fields.get("support") or {}
    values[G.supportKind] = support.get("support_kind")
    values[G.useBasis] = support.get("use_basis")
    for prop, value in values.items():
        if value:
            graph.add((node, prop, Literal(value)))
    for ref in projection.get("decision_refs") or [projection["decision_ref"]]:
        graph.add((node, G.decisionRef, Literal(ref)))
    asserted = (fields.get("time") or {}).get("asserted_at")
    if asserted:
        graph.add((node, G.assertedAt, Literal(asserted, datatype=XSD.dateTime)))


def _quotes(support: dict[str, Any]) -> bool:
    """prov:wasQuotedFrom is a derivation: it says the statement was made from the
    passage. Only a recorded generation input supports that; a post-generation or
    unknown citation would turn a citation into a claim of use (use_basis is
    recorded, never inferred)."""
    return (
        support.get("support_kind") == SupportKind.QUOTATION
        and support.get("use_basis") == UseBasis.GENERATION_INPUT
    )


def _assessment(
    graph: Graph,
    gid: str,
    activity: URIRef,
    assessment: Assessment,
    reviewer_disclosed: bool,
    verdict_disclosed: bool,
) -> None:
    node = URIRef(iri_for(assessment.assessment_ref, "assessment"))
    _types(graph, node, PROV.Entity, G.Assessment)
    graph.add((activity, PROV.used, node))
    assessed = URIRef(link_revision_iri(gid, assessment.grounding_revision))
    graph.add((activity, PROV.used, assessed))
    graph.add(
        (node, G.assessedRevision, Literal(assessment.grounding_revision, datatype=XSD.integer))
    )
    graph.add((node, G.assessmentRef, Literal(assessment.assessment_ref)))
    if assessment.method_ref:
        graph.add((node, G.methodRef, Literal(assessment.method_ref)))
    if verdict_disclosed:
        graph.add((node, G.verdict, Literal(assessment.verdict)))
    if reviewer_disclosed:
        reviewer = URIRef(iri_for(assessment.reviewer_ref, "reviewer"))
        kind = PROV.Person if assessment.reviewer_kind == ReviewerKind.HUMAN else PROV.SoftwareAgent
        _types(graph, reviewer, PROV.Agent, kind)
        graph.add((node, PROV.wasAttributedTo, reviewer))


def _revision_rows(link: GroundingLink, current: int) -> Iterable[tuple[int, Any]]:
    """The first history row of each revision up to the exported one."""
    rows = GroundingLink.history.filter(
        grounding_id=link.grounding_id, revision__lte=current
    ).order_by("revision", "history_date", "history_id")
    seen: dict[int, Any] = {}
    for row in rows:
        seen.setdefault(row.revision, row)
    return sorted(seen.items())


def _records(link: GroundingLink, current: int) -> _Records:
    records = _Records()
    for assessment in Assessment.objects.filter(link=link, recorded_revision__lte=current):
        records.assessments.setdefault(assessment.recorded_revision, []).append(assessment)
    records.withdrawal = Withdrawal.objects.filter(
        link=link, recorded_revision__lte=current
    ).first()
    records.observations = set(
        AnchorObservation.objects.filter(link=link, recorded_revision__lte=current).values_list(
            "recorded_revision", flat=True
        )
    )
    records.disposal = Disposal.objects.filter(link=link, recorded_revision__lte=current).first()
    return records


def _kind(revision: int, records: _Records) -> URIRef:
    """What produced a revision, read from the record it produced."""
    if revision == 1:
        return G.Registration
    if revision in records.assessments:
        return G.AssessmentBinding
    if records.withdrawal and records.withdrawal.recorded_revision == revision:
        return G.Withdrawal
    if records.disposal and records.disposal.recorded_revision == revision:
        return G.Disposal
    if revision in records.observations:
        return G.AnchorObservation
    return G.Revision


def shapes_graph() -> Graph:
    return Graph().parse(SHAPES_PATH, format="turtle")


def validate(graph: Graph) -> tuple[bool, str]:
    """SHACL-validate a graph against the shipped shapes: (conforms, report text)."""
    from pyshacl import validate as shacl_validate

    conforms, _report, text = shacl_validate(graph, shacl_graph=shapes_graph())
    return bool(conforms), str(text)


def _format_losses(projection: dict[str, Any]) -> list[dict[str, str]]:
    fields = projection["fields"]
    withheld = set(projection["withheld"])
    support = fields.get("support") or {}
    entries = [
        loss(
            "state",
            "retain-extension",
            "record_state, recheck_state, display_state, resolution_state and the "
            "decision refs have no PROV-O term; kept as grounding: properties",
        ),
        loss(
            "history.endpoints",
            "disclose-loss",
            "earlier link revisions are named with their activities, agents and times; "
            "the endpoints they bound are not described, only the current disclosed ones",
        ),
    ]
    if "support" not in withheld:
        quoted = _quotes(support)
        entries.append(
            loss(
                "support.use_basis",
                "retain-extension",
                "PROV-O has no term for recorded generation use; kept as "
                "grounding:useBasis. prov:wasQuotedFrom is asserted only for a quotation "
                "recorded as a generation input"
                + ("" if quoted else ", so it is not asserted here"),
            )
        )
        entries.append(
            loss(
                "support.support_kind",
                "retain-extension",
                "kept as grounding:supportKind; support_scope and support_limits are not carried",
            )
        )
    entries.append(
        loss(
            "assessment_disagreement",
            "retain-extension",
            "each assessment is its own entity (with grounding:verdict when disclosed); "
            "PROV-O has no notion of disagreement or of a policy selection",
        )
    )
    entries.append(
        loss(
            "evidence_sets",
            "disclose-loss",
            f"membership in {len(fields.get('evidence_sets') or [])} evidence set(s) and "
            "set assessments are not carried",
        )
    )
    if "passage.excerpt" not in withheld:
        entries.append(
            loss(
                "passage.excerpt",
                "disclose-loss",
                "the excerpt is not copied into the graph; the passage is named by reference",
            )
        )
    entries.append(
        loss(
            "time",
            "disclose-loss",
            "activities carry the registry's recording times; applicability_interval, "
            "review_due and time_uncertainty are not carried",
        )
    )
    return entries
