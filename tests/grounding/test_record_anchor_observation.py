import hashlib
import unicodedata

import pytest

from common.kernel.refusals import Refusal
from grounding import services
from grounding.choices import DisplayState, ResolutionState
from grounding.models import AnchorObservation, GroundingLink
from tests import factories


def digest(text):
    return hashlib.sha256(unicodedata.normalize("NFC", text).encode()).hexdigest()


def observe(world, link, **kwargs):
    return services.record_anchor_observation(
        actor=world.curator, grounding_id=link.pk, expected_revision=link.revision, **kwargs
    )


def test_builtin_resolver_records_one_match_as_resolved(world, link):
    record = observe(world, link, use_builtin_resolver=True)
    link = GroundingLink.objects.get(pk=link.pk)
    assert record.anchor_result["status"] == "resolved"
    assert record.anchor_result["matches"] == [{"start": 11, "end": 25}]
    assert record.anchor_result["text_sha256"] == digest(world.passage.text)
    assert link.resolution_state == ResolutionState.RESOLVED
    assert link.revision == 2
    assert link.current_anchor_observation == record
    # A resolved anchor says nothing about support.
    assert link.display_state == DisplayState.UNASSESSED


def test_a_repeated_quote_stays_ambiguous_and_no_match_is_picked(world):
    passage = factories.make_passage(
        "It opened. Later it opened. It opened again.", dimension=world.dimension
    )
    payload = factories.link_payload(world.dimension, world.profile, passage)
    payload["anchor"]["source_selector"] = {"type": "TextQuoteSelector", "exact": "opened"}
    link = services.register(actor=world.curator, payload=payload)
    record = observe(world, link, use_builtin_resolver=True)
    link.refresh_from_db()
    assert record.anchor_result["status"] == "ambiguous"
    assert record.anchor_result["match_count"] == 3
    assert [m["start"] for m in record.anchor_result["matches"]] == [3, 20, 31]
    assert link.resolution_state == ResolutionState.AMBIGUOUS
    # The selector is never retargeted to one of the matches.
    assert link.current_passage.source_selector == {"type": "TextQuoteSelector", "exact": "opened"}


def test_zero_matches_leave_the_resolution_unknown(world):
    passage = factories.make_passage("Nothing relevant here.", dimension=world.dimension)
    link = factories.register_link(world.curator, world.dimension, world.profile, passage)
    record = observe(world, link, use_builtin_resolver=True)
    assert record.anchor_result["status"] == "unresolved"
    assert record.resolution_state == ResolutionState.UNKNOWN


def test_a_supplied_observation_with_a_reason_records_that_state(world, link):
    record = observe(
        world,
        link,
        observation={
            "status": "unresolved",
            "match_count": 0,
            "matches": [],
            "resolver_ref": "urn:resolver:outside@3",
            "text_sha256": digest(world.passage.text),
            "reason": "stale",
        },
    )
    link = GroundingLink.objects.get(pk=link.pk)
    assert record.resolution_state == ResolutionState.STALE
    assert link.display_state == DisplayState.UNAVAILABLE


def test_a_supplied_observation_on_another_representation_is_refused(world, link):
    with pytest.raises(Refusal) as caught:
        observe(
            world,
            link,
            observation={
                "status": "resolved",
                "match_count": 1,
                "matches": [{"start": 0, "end": 4}],
                "resolver_ref": "urn:resolver:outside@3",
                "text_sha256": "0" * 64,
            },
        )
    assert caught.value.code == "anchor_input_mismatch"
    assert AnchorObservation.objects.count() == 0


def test_an_inconsistent_observation_is_refused_with_pointers(world, link):
    with pytest.raises(Refusal) as caught:
        observe(
            world,
            link,
            observation={
                "status": "resolved",
                "match_count": 2,
                "matches": [{"start": 5, "end": 1}],
                "resolver_ref": "urn:resolver:outside@3",
                "text_sha256": digest(world.passage.text),
            },
        )
    assert caught.value.code == "validation_error"
    assert {(o.pointer, o.code) for o in caught.value.offenders} == {
        ("/match_count", "schema.const"),
        ("/match_count", "anchor_result.match_count_mismatch"),
        ("/matches/0/end", "anchor_result.range_inverted"),
    }


def test_builtin_resolver_needs_local_text(world):
    link = factories.register_link(world.curator, world.dimension, world.profile)
    with pytest.raises(Refusal) as caught:
        observe(world, link, use_builtin_resolver=True)
    assert caught.value.code == "anchor_text_unavailable"


def test_anchor_observation_by_a_projection_agent_is_refused(world, link):
    with pytest.raises(Refusal) as caught:
        services.record_anchor_observation(
            actor=world.projection_agent,
            grounding_id=link.pk,
            expected_revision=1,
            use_builtin_resolver=True,
        )
    assert caught.value.code == "role_required"
