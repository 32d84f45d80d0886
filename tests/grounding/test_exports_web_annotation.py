"""The W3C Web Annotation export of `project`: every MUST of the W3C conformance
suite, roles from the endpoint role map, disclosure, loss report, round trip."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from common.kernel.canonical import canonical_sha256
from common.kernel.refusals import Refusal
from grounding import services
from grounding.exports import web_annotation
from grounding.models import Projection
from policies.models import AuditEvent
from tests import factories
from tests.grounding import export_helpers as h

FORMAT = "web-annotation"
QUOTE = "opened in 1932"
LOSS_REPORT_SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "grounding" / "schemas" / "loss_report.json").read_text()
)


def state(document):
    return document["grounding:state"]


@pytest.mark.parametrize("kind", [*h.KINDS, "revised"])
def test_every_w3c_must_assertion_passes(world, kind):
    case = h.make_case(world, kind)
    body = h.project(world, case.link, FORMAT)
    assert len(h.w3c_must_assertions()) == 54
    assert h.w3c_failures(body["document"]) == []
    assert body["display_state"] == case.display_state
    assert state(body["document"])["grounding:display_state"] == case.display_state


def test_the_w3c_assertions_can_fail(world, link):
    h.decide(world)
    document = h.project(world, link, FORMAT)["document"]
    no_context = {key: value for key, value in document.items() if key != "@context"}
    assert any("annotationContextValidated" in f for f in h.w3c_failures(no_context))
    context_not_first = copy.deepcopy(document)
    context_not_first["@context"] = {"grounding": "urn:grounding:vocab#"}
    assert h.w3c_failures(context_not_first)
    foreign_selector = copy.deepcopy(document)
    foreign_selector["body"]["selector"] = {"type": "WspSegmentSelector", "segment": 0}
    assert any("selectorValidIfPresent" in f for f in h.w3c_failures(foreign_selector))
    both = copy.deepcopy(document)
    both["bodyValue"] = "text"
    assert any("notBodyBodyValue" in f for f in h.w3c_failures(both))


def test_the_annotation_names_the_exact_revision_and_hashes(world, link):
    link = h.assess(world, link)
    h.decide(world)
    body = h.project(world, link, FORMAT)
    document = body["document"]
    assert document["@context"][0] == "http://www.w3.org/ns/anno.jsonld"
    assert document["id"] == f"urn:grounding:{link.pk}@2" == link.revision_ref
    assert (body["revision"], body["projection_revision"]) == (2, 2)
    assert state(document)["grounding:revision"] == 2
    assert body["export_sha256"] == canonical_sha256(document)
    stored = {k: v for k, v in body.items() if k not in ("projection_ref", "projection_revision")}
    assert canonical_sha256({k: v for k, v in stored.items() if k != "sha256"}) == body["sha256"]
    record = Projection.objects.get(link=link)
    assert (record.format, record.projection_revision, record.sha256) == (FORMAT, 2, body["sha256"])
    assert record.loss_report == body["loss_report"]
    assert body["media_type"].startswith("application/ld+json")
    assert "fields" not in body
    for key in ("grounding_id", "display_state", "decision_ref", "withheld", "loss_report"):
        assert key in body


def test_default_roles_statement_is_target_and_passage_is_body(world, link):
    h.decide(world)
    document = h.project(world, link, FORMAT)["document"]
    assert document["motivation"] == "linking"
    assert document["target"]["type"] == "SpecificResource"
    assert document["target"]["source"] == "urn:answer:42@2"
    assert document["target"]["id"] == "urn:answer:42#s3"
    assert document["target"]["selector"] == factories.BASE_PAYLOAD["statement"]["answer_selector"]
    assert document["body"]["source"] == world.passage.passage_ref
    assert document["body"]["selector"] == factories.BASE_PAYLOAD["anchor"]["source_selector"]


def test_roles_follow_the_profiles_endpoint_role_map(world):
    profile = factories.make_profile(endpoint_role_map={"statement": "body", "passage": "target"})
    link = factories.register_link(world.curator, world.dimension, profile, world.passage)
    h.decide(world)
    document = h.project(world, link, FORMAT)["document"]
    assert document["body"]["source"] == "urn:answer:42@2"
    assert document["target"]["source"] == world.passage.passage_ref
    assert state(document)["grounding:endpoint_role_map"] == {
        "grounding:statement": "body",
        "grounding:passage": "target",
    }
    assert h.w3c_failures(document) == []


@pytest.mark.parametrize("kind", ["selector_withheld", "restricted"])
def test_a_withheld_source_selector_leaves_the_body_without_one(world, kind):
    case = h.make_case(world, kind)
    body = h.project(world, case.link, FORMAT)
    assert "selector" not in body["document"]["body"]
    assert "anchor.selector" in body["withheld"]
    entry = next(e for e in body["loss_report"] if e["distinction"] == "anchor.selector")
    assert entry["disposition"] == "disclose-loss"
    assert "no selector" in entry["detail"]
    assert QUOTE not in json.dumps(body)
    assert h.w3c_failures(body["document"]) == []


def test_a_restricted_passage_keeps_title_and_locator_out(world):
    case = h.make_case(world, "restricted")
    body = h.project(world, case.link, FORMAT)
    extension = state(body["document"])
    assert "grounding:title" not in extension
    assert "grounding:locator" not in extension
    assert {"passage.title", "passage.locator", "passage.excerpt"} <= set(body["withheld"])
    assert body["display_state"] == "restricted"


def test_withheld_verdicts_and_reviewers_do_not_reach_the_annotation(world, link):
    link = h.assess(world, link)
    h.decide(world, ["statement", "support", "anchor.selector"])
    body = h.project(world, link, FORMAT)
    assert body["display_state"] == "visible"
    assert "grounding:displayed_verdict" not in state(body["document"])
    text = json.dumps(body["document"])
    assert "supporting" not in text
    assert "urn:reviewer:r1" not in text
    assert {"assessments.verdict", "assessments.reviewer"} <= set(body["withheld"])


def test_a_visible_link_carries_its_displayed_verdict_and_support(world):
    case = h.make_case(world, "visible")
    extension = state(h.project(world, case.link, FORMAT)["document"])
    assert extension["grounding:displayed_verdict"] == "supporting"
    assert extension["grounding:support_kind"] == "quotation"
    assert extension["grounding:use_basis"] == "post_generation"
    assert extension["grounding:record_state"] == "candidate"


def test_a_disputed_link_reports_the_disagreement_it_cannot_carry(world):
    case = h.make_case(world, "disputed")
    body = h.project(world, case.link, FORMAT)
    extension = state(body["document"])
    assert extension["grounding:display_state"] == "disputed"
    assert "grounding:displayed_verdict" not in extension
    distinctions = {e["distinction"]: e["disposition"] for e in body["loss_report"]}
    assert distinctions["assessment_disagreement"] == "disclose-loss"
    assert distinctions["assessments"] == "disclose-loss"


def test_a_withdrawn_link_says_so_in_the_extension(world):
    case = h.make_case(world, "withdrawn")
    body = h.project(world, case.link, FORMAT)
    extension = state(body["document"])
    assert extension["grounding:display_state"] == "withdrawn"
    assert extension["grounding:record_state"] == "withdrawn"
    assert extension["grounding:withdrawal"]["grounding:authority_ref"] == "urn:policy:withdraw@1"
    assert "grounding:displayed_verdict" not in extension
    assert any(e["distinction"] == "withdrawal" for e in body["loss_report"])


@pytest.mark.parametrize("kind", [*h.KINDS, "revised"])
def test_loss_report_entries_follow_the_profiles_schema(world, kind):
    case = h.make_case(world, kind)
    body = h.project(world, case.link, FORMAT)
    Draft202012Validator(LOSS_REPORT_SCHEMA).validate(body["loss_report"])
    distinctions = [e["distinction"] for e in body["loss_report"]]
    assert len(distinctions) == len(set(distinctions))
    # Every withheld field stays reported, with the format's consequence.
    assert set(body["withheld"]) <= set(distinctions)
    for name in ("evidence_sets", "assessments", "state"):
        assert name in distinctions


@pytest.mark.parametrize("kind", [*h.KINDS, "revised"])
def test_round_trip_keeps_refs_selectors_and_revision(world, kind):
    case = h.make_case(world, kind)
    body = h.project(world, case.link, FORMAT)
    document = json.loads(json.dumps(body["document"]))
    link = case.link
    statement = link.current_statement
    passage = link.current_passage
    assert document["id"] == link.revision_ref
    assert state(document)["grounding:revision"] == link.revision
    assert document["target"]["id"] == state(document)["grounding:statement_ref"]
    assert state(document)["grounding:statement_ref"] == statement.statement_ref
    assert document["target"]["source"] == statement.answer_revision_ref
    assert document["target"]["selector"] == statement.answer_selector
    assert document["body"]["source"] == passage.passage_ref
    if case.selector_disclosed:
        assert document["body"]["selector"] == passage.source_selector
    else:
        assert "selector" not in document["body"]


def test_a_withheld_statement_makes_the_export_unrepresentable(world, link):
    h.decide(world, ["support", "passage.locator"])
    with pytest.raises(Refusal) as caught:
        h.project(world, link, FORMAT)
    assert caught.value.code == "export_unrepresentable"
    assert caught.value.extra["loss_report"][0]["disposition"] == "reject"
    assert not Projection.objects.filter(link=link).exists()
    assert AuditEvent.objects.filter(
        action="project", outcome="refused", code="export_unrepresentable"
    ).exists()


def test_a_non_w3c_source_selector_is_kept_in_the_extension(world, link):
    """WSP segment references are not a W3C selector type: the body carries none
    (so the annotation still conforms) and the extension keeps it."""
    h.decide(world)
    native = services.project(
        actor=world.projection_agent,
        grounding_id=link.pk,
        recipient=h.RECIPIENT,
        purpose=h.PURPOSE,
    )
    segment = {"type": "WspSegmentSelector", "segment": 2, "field": "text"}
    native["fields"]["anchor"]["source_selector"] = segment
    body = web_annotation.build(native, link=link)
    assert "selector" not in body["document"]["body"]
    assert state(body["document"])["grounding:source_selector"] == segment
    entry = next(
        e for e in body["loss_report"] if e["distinction"] == "anchor.selector.wsp_segment"
    )
    assert entry["disposition"] == "retain-extension"
    assert h.w3c_failures(body["document"]) == []
