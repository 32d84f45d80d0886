"""Set-up shared by the export tests: links in each state of interest, built with the
real services, their disclosure decisions, and the W3C assertion runner."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from grounding import services
from policies import governance
from tests import factories

RECIPIENT = "partner:acme"
PURPOSE = "citation-display"
ALL_FIELDS = [
    "statement",
    "support",
    "passage.locator",
    "passage.title",
    "passage.excerpt",
    "anchor.selector",
    "assessments.verdict",
    "assessments.reviewer",
]
WITHOUT_SELECTOR = [name for name in ALL_FIELDS if name != "anchor.selector"]
_refs = itertools.count(1)


def decide(world, fields=None, **overrides):
    values = {
        "decision_ref": f"urn:access:export-{next(_refs)}",
        "recipient_scope": RECIPIENT,
        "purpose": PURPOSE,
        "fields": list(fields or ALL_FIELDS),
        "grounding_ids": None,
    }
    values.update(overrides)
    return governance.record_disclosure_decision(
        actor=world.access_steward, dimension=world.dimension, values=values
    )


def project(world, link, format: str) -> dict[str, Any]:
    return services.project(
        actor=world.projection_agent,
        grounding_id=link.pk,
        recipient=RECIPIENT,
        purpose=PURPOSE,
        format=format,
    )


def assess(world, link, **overrides):
    services.bind_assessment(
        actor=world.reviewer,
        grounding_id=link.pk,
        expected_revision=link.revision,
        assessment=factories.assessment_body(link.revision, **overrides),
    )
    link.refresh_from_db()
    return link


@dataclass
class Case:
    """A link in one state, the decision fields it is projected under, and what the
    export must show of it."""

    name: str
    link: Any
    fields: list[str]
    display_state: str
    selector_disclosed: bool


def make_case(world, name: str) -> Case:
    """Build one kind of link through the services (see KINDS)."""
    register = factories.register_link
    fields = ALL_FIELDS
    if name == "unassessed":
        link = register(world.curator, world.dimension, world.profile, world.passage)
    elif name == "visible":
        link = register(world.curator, world.dimension, world.profile, world.passage)
        link = assess(world, link)
    elif name == "disputed":
        link = register(world.curator, world.dimension, world.profile, world.passage)
        link = assess(world, link)
        link = assess(world, link, verdict="conflicting", reviewer_ref="urn:reviewer:r2")
    elif name == "withdrawn":
        link = register(world.curator, world.dimension, world.profile, world.passage)
        link = assess(world, link)
        services.withdraw(
            actor=world.access_steward,
            grounding_id=link.pk,
            expected_revision=link.revision,
            withdrawal={"reason": "source retracted", "authority_ref": "urn:policy:withdraw@1"},
        )
        link.refresh_from_db()
    elif name == "restricted":
        passage = factories.make_passage(access_label="restricted", dimension=world.dimension)
        link = register(world.curator, world.dimension, world.profile, passage)
    elif name == "selector_withheld":
        link = register(world.curator, world.dimension, world.profile, world.passage)
        link = assess(world, link)
        fields = WITHOUT_SELECTOR
    elif name == "revised":
        link = register(world.curator, world.dimension, world.profile, world.passage)
        link = assess(world, link)
        services.revise(
            actor=world.curator,
            grounding_id=link.pk,
            expected_revision=link.revision,
            changes={
                "anchor": {
                    "source_selector": {"type": "TextPositionSelector", "start": 11, "end": 25},
                    "selector_profile": "nfc-codepoint-halfopen@1",
                },
                "revision_reason": "positions instead of a quote",
            },
        )
        link.refresh_from_db()
    else:  # pragma: no cover - a typo in a parametrization
        raise ValueError(name)
    decide(world, fields)
    link.refresh_from_db()
    return Case(
        name=name,
        link=link,
        fields=list(fields),
        display_state=link.display_state,
        selector_disclosed="anchor.selector" in fields and name != "restricted",
    )


KINDS = ["unassessed", "visible", "disputed", "withdrawn", "restricted", "selector_withheld"]


# -- W3C Web Annotation assertions ---------------------------------------------------


def conformance_root() -> Path:
    # Vendored with its licence (tests/conformance/README.md).
    return Path(__file__).resolve().parent.parent / "conformance" / "w3c-annotation-tests"


@cache
def _w3c() -> tuple[Any, list[tuple[str, dict[str, Any]]]]:
    from jsonschema import Draft4Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT4

    root = conformance_root()
    registry = Registry()
    for path in sorted((root / "definitions").glob("*.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        registry = registry.with_resource(
            schema["id"], Resource.from_contents(schema, default_specification=DRAFT4)
        )
    manifest = json.loads((root / "annotations" / "annotationMusts.test").read_text())
    assertions = [
        (name, json.loads((root / name).read_text(encoding="utf-8")))
        for name in manifest["assertions"]
    ]
    return (Draft4Validator, registry), assertions


def w3c_must_assertions() -> list[tuple[str, dict[str, Any]]]:
    return _w3c()[1]


def w3c_failures(document: dict[str, Any]) -> list[str]:
    """Every `must` assertion of annotationMusts.test whose result is not the
    expected one, as readable messages (empty when the document conforms)."""
    assertions = w3c_must_assertions()
    (validator_cls, registry), _ = _w3c()
    failures = []
    for name, schema in assertions:
        if schema.get("assertionType") != "must":
            continue
        validator = validator_cls(
            schema, registry=registry, format_checker=validator_cls.FORMAT_CHECKER
        )
        valid = validator.is_valid(document)
        if valid != (schema.get("expectedResult", "valid") == "valid"):
            failures.append(f"{name}: {schema.get('errorMessage', '')}")
    return failures
