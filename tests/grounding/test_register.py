import pytest

from common.kernel.refusals import Refusal
from grounding import services
from grounding.choices import DisplayState, RecheckState, RecordState, ResolutionState
from grounding.models import GroundingLink, PassageBinding, StatementBinding
from policies.choices import AuditOutcome, Role
from policies.models import AuditEvent
from tests import factories


def refused(code, fn, **kwargs) -> Refusal:
    with pytest.raises(Refusal) as caught:
        fn(**kwargs)
    assert caught.value.code == code, caught.value
    return caught.value


def test_register_creates_an_unassessed_candidate_at_revision_1(world):
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    link.refresh_from_db()
    assert link.revision == 1
    assert link.record_state == RecordState.CANDIDATE
    assert link.recheck_state == RecheckState.CURRENT
    assert link.display_state == DisplayState.UNASSESSED
    assert link.resolution_state == ResolutionState.UNATTEMPTED
    assert link.assessments.count() == 0
    assert link.current_statement.statement_ref == "urn:answer:42#s3"
    assert link.current_passage.passage_id == world.passage.passage_id
    assert link.current_passage.passage_ref == world.passage.passage_ref
    assert link.current_passage.source_selector["exact"] == "opened in 1932"
    assert link.use_basis == "post_generation"
    assert link.observed_at is not None
    assert link.disposition_policy_ref == world.dimension.disposition_policy_ref
    assert link.created_by == world.curator


def test_register_derives_source_binding_and_digest_from_the_evidence_passage(world):
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    binding = link.current_passage
    assert binding.source_revision_binding == {
        "source_ref": world.passage.canonical_url,
        "revision": f"sha256:{world.passage.content_sha256}",
        "media_type": "text/plain",
    }
    assert binding.representation_check["digest"]["value"] == world.passage.content_sha256


def test_register_writes_one_history_row_per_object_with_actor_and_reason(world):
    link = factories.register_link(world.curator, world.dimension, world.profile)
    rows = list(GroundingLink.history.filter(grounding_id=link.pk))
    assert [(r.revision, r.history_user, r.history_change_reason) for r in rows] == [
        (1, world.curator, "registered as a candidate")
    ]
    assert StatementBinding.history.filter(link_id=link.pk).count() == 1
    assert PassageBinding.history.filter(link_id=link.pk).count() == 1


def test_register_writes_one_applied_audit_event(world):
    link = factories.register_link(world.curator, world.dimension, world.profile)
    events = list(AuditEvent.objects.filter(grounding_id=link.pk))
    assert [(e.action, e.outcome, e.resulting_revision, e.actor_ref) for e in events] == [
        ("register", AuditOutcome.APPLIED, 1, f"user:{world.curator.username}")
    ]


def test_register_external_passage_keeps_the_supplied_binding(world):
    link = factories.register_link(world.curator, world.dimension, world.profile)
    assert link.current_passage.passage is None
    assert link.current_passage.passage_ref.startswith("urn:ext:passage:")
    assert link.current_passage.source_revision_binding["revision"] == "etag:abc"


def test_register_without_curator_role_is_refused_and_audited(world):
    payload = factories.link_payload(world.dimension, world.profile)
    refused("role_required", services.register, actor=world.reviewer, payload=payload)
    assert GroundingLink.objects.count() == 0
    event = AuditEvent.objects.get(action="register")
    assert (event.outcome, event.code, event.dimension_ref) == (
        AuditOutcome.REFUSED,
        "role_required",
        world.dimension.name,
    )


def test_register_with_a_draft_profile_is_refused(world):
    draft = factories.make_profile(publish=False)
    payload = factories.link_payload(world.dimension, draft)
    refused("profile_not_published", services.register, actor=world.curator, payload=payload)
    assert GroundingLink.objects.count() == 0


def test_register_in_an_inactive_dimension_is_refused(world):
    inactive = factories.make_dimension(is_active=False)
    curator = factories.user_with_roles(inactive, Role.CURATOR)
    payload = factories.link_payload(inactive, world.profile)
    refused("dimension_inactive", services.register, actor=curator, payload=payload)


def test_register_reports_every_offender_with_a_pointer(world):
    payload = factories.link_payload(world.dimension, world.profile)
    del payload["statement"]["statement_ref"]
    payload["statement"]["answer_selector"] = {"type": "TextPositionSelector", "start": 9, "end": 2}
    payload["support"]["support_kind"] = "vibes"
    payload["anchor"]["color"] = "red"
    payload["time"]["asserted_at"] = "2026-11-30"
    refusal = refused("validation_error", services.register, actor=world.curator, payload=payload)
    pointers = {(o.pointer, o.code) for o in refusal.offenders}
    assert ("/statement/statement_ref", "required") in pointers
    assert ("/statement/answer_selector/end", "selector.range_inverted") in pointers
    assert ("/support/support_kind", "enum") in pointers
    assert ("/anchor/color", "unknown_field") in pointers
    assert ("/time/asserted_at", "format") in pointers
    assert GroundingLink.objects.count() == 0


def test_register_with_an_unknown_passage_id_is_refused(world):
    payload = factories.link_payload(world.dimension, world.profile)
    payload["passage"] = {"passage_id": "0190e7a2-0000-7000-8000-000000000000"}
    refusal = refused("validation_error", services.register, actor=world.curator, payload=payload)
    assert [(o.pointer, o.code) for o in refusal.offenders] == [
        ("/passage/passage_id", "unknown_reference")
    ]


def test_register_support_kind_outside_the_profile_vocabulary_is_refused(world):
    narrow = factories.make_profile(support_vocabulary=["quotation"])
    payload = factories.link_payload(world.dimension, narrow)
    payload["support"]["support_kind"] = "paraphrase"
    refusal = refused("validation_error", services.register, actor=world.curator, payload=payload)
    assert [(o.pointer, o.code) for o in refusal.offenders] == [
        ("/support/support_kind", "not_in_profile")
    ]


def test_register_applies_the_profile_stricter_schema(world):
    strict = factories.make_profile(
        field_schemas={
            "claim_scope": {
                "type": "object",
                "required": ["proposition", "qualifiers"],
            }
        }
    )
    payload = factories.link_payload(world.dimension, strict)
    refusal = refused("validation_error", services.register, actor=world.curator, payload=payload)
    assert [(o.pointer, o.code) for o in refusal.offenders] == [
        ("/statement/claim_scope/qualifiers", "profile.required")
    ]


def test_register_generation_use_needs_a_recorded_trace(world):
    payload = factories.link_payload(world.dimension, world.profile)
    payload["support"]["use_basis"] = "generation_input"
    refusal = refused("validation_error", services.register, actor=world.curator, payload=payload)
    assert [(o.pointer, o.code) for o in refusal.offenders] == [
        ("/support/generation_evidence_ref", "generation_evidence_required")
    ]
    payload["support"]["generation_evidence_ref"] = "urn:trace:gen-1#ctx-3"
    link = services.register(actor=world.curator, payload=payload)
    assert link.use_basis == "generation_input"


def test_register_without_asserted_time_records_it_as_unknown(world):
    payload = factories.link_payload(world.dimension, world.profile)
    payload["time"] = {}
    link = services.register(actor=world.curator, payload=payload)
    assert link.asserted_at is None
    assert link.time_uncertainty == {"asserted_at": "unknown"}


def test_register_a_restricted_passage_displays_restricted(world):
    secret = factories.make_passage(access_label="restricted", dimension=world.dimension)
    link = factories.register_link(world.curator, world.dimension, world.profile, secret)
    assert link.display_state == DisplayState.RESTRICTED


def test_register_many_is_all_or_nothing_with_every_offender(world):
    good = factories.link_payload(world.dimension, world.profile)
    bad = factories.link_payload(world.dimension, world.profile)
    bad["support"]["support_kind"] = "nope"
    refusal = refused(
        "validation_error", services.register_many, actor=world.curator, items=[good, bad, bad]
    )
    assert [(o.pointer, o.code) for o in refusal.offenders] == [
        ("/items/1/support/support_kind", "enum"),
        ("/items/2/support/support_kind", "enum"),
    ]
    assert GroundingLink.objects.count() == 0
    assert GroundingLink.history.count() == 0


def test_register_many_writes_bulk_history_and_audit(world):
    items = [
        factories.link_payload(world.dimension, world.profile, world.passage) for _ in range(5)
    ]
    links = services.register_many(actor=world.curator, items=items)
    ids = {link.pk for link in links}
    assert GroundingLink.objects.filter(pk__in=ids).count() == 5
    history = GroundingLink.history.filter(grounding_id__in=ids)
    assert sorted((h.revision, h.history_user_id) for h in history) == [(1, world.curator.pk)] * 5
    assert StatementBinding.history.filter(link_id__in=ids).count() == 5
    assert AuditEvent.objects.filter(action="register_bulk", grounding_id__in=ids).count() == 5
