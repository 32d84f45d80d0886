"""Every service call, accepted or refused, leaves exactly one audit event."""

import json

import pytest

from common.kernel.refusals import Refusal
from grounding import services
from policies.models import AuditEvent
from tests import factories


def calls(world, link):
    """(description, callable) pairs covering every operation, accepted and refused."""
    rev = lambda: type(link).objects.get(pk=link.pk).revision  # noqa: E731
    return [
        (
            "register",
            lambda: factories.register_link(world.curator, world.dimension, world.profile),
        ),
        (
            "register refused",
            lambda: factories.register_link(world.reviewer, world.dimension, world.profile),
        ),
        (
            "register_bulk",
            lambda: services.register_many(
                actor=world.curator,
                items=[factories.link_payload(world.dimension, world.profile)],
            ),
        ),
        (
            "anchor",
            lambda: services.record_anchor_observation(
                actor=world.curator,
                grounding_id=link.pk,
                expected_revision=rev(),
                use_builtin_resolver=True,
            ),
        ),
        (
            "assessment refused (stale)",
            lambda: services.bind_assessment(
                actor=world.reviewer,
                grounding_id=link.pk,
                expected_revision=1,
                assessment=factories.assessment_body(1),
            ),
        ),
        (
            "assessment",
            lambda: services.bind_assessment(
                actor=world.reviewer,
                grounding_id=link.pk,
                expected_revision=rev(),
                assessment=factories.assessment_body(rev()),
            ),
        ),
        (
            "revise",
            lambda: services.revise(
                actor=world.curator,
                grounding_id=link.pk,
                expected_revision=rev(),
                changes={"owner_ref": "role:b", "revision_reason": "handover"},
            ),
        ),
        (
            "project refused",
            lambda: services.project(
                actor=world.projection_agent,
                grounding_id=link.pk,
                recipient="partner:x",
                purpose="display",
            ),
        ),
        (
            "withdraw",
            lambda: services.withdraw(
                actor=world.access_steward,
                grounding_id=link.pk,
                expected_revision=rev(),
                withdrawal={"reason": "retracted", "authority_ref": "urn:policy:w@1"},
            ),
        ),
        (
            "dispose",
            lambda: services.dispose(
                actor=world.access_steward,
                grounding_id=link.pk,
                expected_revision=rev(),
                disposal={"receipt_ref": "urn:receipt:1", "policy_ref": "urn:policy:r@1"},
            ),
        ),
        (
            "dispose refused (already)",
            lambda: services.dispose(
                actor=world.access_steward,
                grounding_id=link.pk,
                expected_revision=rev(),
                disposal={"receipt_ref": "urn:receipt:1", "policy_ref": "urn:policy:r@1"},
            ),
        ),
    ]


def test_every_call_accepted_or_refused_writes_exactly_one_event(world, link):
    for description, call in calls(world, link):
        before = AuditEvent.objects.count()
        try:
            call()
            refused = False
        except Refusal:
            refused = True
        new = list(AuditEvent.objects.order_by("-occurred_at", "-event_id")[:1])
        assert AuditEvent.objects.count() == before + 1, description
        assert new[0].outcome == ("refused" if refused else "applied"), description
        assert refused == ("refused" in description), description


def test_audit_events_carry_references_never_source_text(world):
    secret = "the confidential clause"
    passage = factories.make_passage(
        f"Here is {secret} verbatim.", title=f"Title {secret}", dimension=world.dimension
    )
    payload = factories.link_payload(world.dimension, world.profile, passage)
    payload["anchor"]["source_selector"] = {"type": "TextQuoteSelector", "exact": secret}
    link = services.register(actor=world.curator, payload=payload)
    services.record_anchor_observation(
        actor=world.curator, grounding_id=link.pk, expected_revision=1, use_builtin_resolver=True
    )
    with pytest.raises(Refusal):
        services.revise(
            actor=world.curator,
            grounding_id=link.pk,
            expected_revision=1,
            changes={
                "anchor": {"source_selector": {"type": "TextQuoteSelector", "exact": secret}},
                "revision_reason": "stale",
            },
        )
    for event in AuditEvent.objects.all():
        serialized = json.dumps(
            [event.action, event.code, event.references, event.decision_ref, event.actor_ref]
        )
        assert secret not in serialized


def test_the_audit_log_mirror_writes_one_json_line_per_committed_event(
    world, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.GROUNDING_AUDIT_LOG_PATH = str(tmp_path / "audit.jsonl")
    with django_capture_on_commit_callbacks(execute=True):
        link = factories.register_link(world.curator, world.dimension, world.profile)
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert (entry["action"], entry["outcome"], entry["grounding_id"]) == (
        "register",
        "applied",
        str(link.pk),
    )
