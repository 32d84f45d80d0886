"""The fan-out service: batches, resuming an interrupted notification, the import's
body function, review deadlines, and the idempotence property."""

from __future__ import annotations

import copy
import io
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from common.kernel.refusals import Refusal
from grounding import services
from grounding.models import ChangeNotification, ChangeNotificationLink, GroundingLink
from grounding.services import changes
from policies.models import AuditEvent
from tests import factories
from tests.conftest import requires_postgres


def payload(world, **overrides):
    values = {
        "dimension": world.dimension.name,
        "change_ref": "urn:change:1",
        "kind": "source",
        "subject_ref": world.passage.canonical_url,
        "observed_at": "2026-12-01T09:00:00Z",
        "reason": "re-published",
    }
    values.update(overrides)
    return values


def register(world, count, passage=None, **overrides):
    items = [
        factories.link_payload(world.dimension, world.profile, passage or world.passage)
        for _ in range(count)
    ]
    for item in items:
        item.update(overrides)
    return services.register_many(actor=world.curator, items=items)


def snapshot(world):
    links = GroundingLink.objects.filter(dimension=world.dimension).order_by("pk")
    return [
        (
            str(link.pk),
            link.revision,
            link.basis_revision,
            link.recheck_state,
            link.change_ref,
            link.display_state,
            link.current_statement.rebind_requirement,
            link.history.count(),
        )
        for link in links.select_related("current_statement")
    ]


def test_a_notification_larger_than_a_batch_is_applied_in_batches_exactly_once(world):
    created = register(world, 7)
    outcome = services.notify_change(actor=world.curator, payload=payload(world), batch_size=3)
    notification = outcome.notification
    assert outcome.created and notification.completed_at is not None
    assert notification.affected == 7
    assert sorted(notification.affected_links.values_list("link_id", flat=True)) == sorted(
        link.grounding_id for link in created
    )
    assert {row[1] for row in snapshot(world)} == {2}
    # One history row for the record, one when it completed.
    assert notification.history.count() == 2


def test_an_interrupted_notification_is_resumed_by_posting_it_again(world):
    register(world, 7)
    # The first transaction (record and first batch) committed, then the caller died.
    outcome, _ = changes._open(actor=world.curator, payload=payload(world), batch_size=3)
    assert outcome.notification.completed_at is None
    assert ChangeNotificationLink.objects.count() == 3
    again = services.notify_change(actor=world.curator, payload=payload(world), batch_size=3)
    assert not again.created
    assert again.notification.completed_at is not None
    assert again.notification.affected == 7
    assert {row[1] for row in snapshot(world)} == {2}


def test_links_revised_or_withdrawn_before_their_batch_are_judged_as_committed(world):
    first, moved = register(world, 2)
    other = factories.make_passage("Other text.", dimension=world.dimension)
    services.revise(
        actor=world.curator,
        grounding_id=moved.grounding_id,
        expected_revision=1,
        changes={"passage": {"passage_id": str(other.passage_id)}, "revision_reason": "rebound"},
    )
    outcome = services.notify_change(actor=world.curator, payload=payload(world))
    assert list(outcome.notification.affected_links.values_list("link_id", flat=True)) == [
        first.grounding_id
    ]
    assert GroundingLink.objects.get(pk=moved.grounding_id).revision == 2


def test_notify_source_changes_runs_in_the_callers_transaction_and_reports(world):
    bound = register(world, 2)
    unrelated = factories.make_passage("Unrelated.", dimension=world.dimension)
    with transaction.atomic():
        entries = services.do_notify_source_changes(
            actor=world.curator,
            dimension=world.dimension,
            changes=[
                (world.passage.canonical_url, "urn:wsp:change:a", "extracted text differs"),
                (unrelated.canonical_url, "urn:wsp:change:b", "extracted text differs"),
            ],
        )
    assert entries == [
        {"canonical_url": world.passage.canonical_url, "change_ref": "urn:wsp:change:a",
         "affected": 2},
        {"canonical_url": unrelated.canonical_url, "change_ref": "urn:wsp:change:b",
         "affected": 0},
    ]  # fmt: skip
    for link in bound:
        stored = GroundingLink.objects.get(pk=link.grounding_id)
        assert (stored.revision, stored.change_ref) == (2, "urn:wsp:change:a")
    # A replayed import reports the same and changes nothing.
    again = services.do_notify_source_changes(
        actor=world.curator,
        dimension=world.dimension,
        changes=[(world.passage.canonical_url, "urn:wsp:change:a", "extracted text differs")],
    )
    assert again == entries[:1]
    assert {row[1] for row in snapshot(world)} == {2}


def test_notify_source_changes_rolls_back_with_its_caller_on_a_conflict(world):
    register(world, 1)
    services.do_notify_source_changes(
        actor=world.curator,
        dimension=world.dimension,
        changes=[(world.passage.canonical_url, "urn:wsp:change:a", "first")],
    )
    with pytest.raises(Refusal) as refused, transaction.atomic():
        services.do_notify_source_changes(
            actor=world.curator,
            dimension=world.dimension,
            changes=[
                (world.passage.canonical_url, "urn:wsp:change:c", "new one"),
                (world.passage.canonical_url, "urn:wsp:change:a", "another body"),
            ],
        )
    assert refused.value.code == "change_conflict"
    assert not ChangeNotification.objects.filter(change_ref="urn:wsp:change:c").exists()
    assert {row[1] for row in snapshot(world)} == {2}


def test_notify_source_changes_needs_a_curator_or_steward(world):
    with pytest.raises(Refusal) as refused:
        services.do_notify_source_changes(
            actor=world.reviewer,
            dimension=world.dimension,
            changes=[(world.passage.canonical_url, "urn:wsp:change:a", "x")],
        )
    assert refused.value.code == "role_required"


def _due(world, count, when):
    return register(world, count, time={"asserted_at": "2026-11-30T12:00:00Z", "review_due": when})


def test_recheck_due_sends_overdue_links_to_review_once(world):
    now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    overdue = _due(world, 2, "2026-11-30T00:00:00Z")
    _due(world, 1, "2026-12-24T00:00:00Z")
    register(world, 1)
    [notification] = services.sweep_review_due(now=now)
    assert notification.kind == "review_due"
    assert notification.change_ref == (
        f"urn:change:review-due:{world.dimension.name}:20261201T090000.000000Z"
    )
    assert sorted(notification.affected_links.values_list("link_id", flat=True)) == sorted(
        link.grounding_id for link in overdue
    )
    before = snapshot(world)
    assert services.sweep_review_due(now=now + timedelta(hours=1)) == []
    assert snapshot(world) == before
    # Past the second deadline, only that link goes.
    [later] = services.sweep_review_due(now=datetime(2026, 12, 25, tzinfo=UTC))
    assert later.affected == 1


def test_the_recheck_due_command_prints_what_it_did_and_is_idempotent(world):
    _due(world, 2, "2026-11-30T00:00:00Z")
    out = io.StringIO()
    call_command("recheck_due", stdout=out)
    assert f"{world.dimension.name}: 2 links" in out.getvalue()
    out = io.StringIO()
    call_command("recheck_due", stdout=out)
    assert "no link is past its review_due" in out.getvalue()
    assert (
        AuditEvent.objects.filter(action="notify_change", grounding_id__isnull=False).count() == 2
    )


KINDS = st.sampled_from(["source", "answer", "policy", "assessment"])


@pytest.mark.django_db
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(kind=KINDS, times=st.integers(min_value=1, max_value=4), batch=st.integers(1, 4))
def test_applying_a_notification_any_number_of_times_equals_applying_it_once(
    world, kind, times, batch
):
    dimension = factories.make_dimension()
    curator = factories.user_with_roles(dimension, "curator")
    reviewer = factories.user_with_roles(dimension, "reviewer")
    # Evidence belongs to its Dimension: this one's own passage of the same source.
    passage = factories.make_passage(
        world.passage.text, dimension=dimension, canonical_url=world.passage.canonical_url
    )
    links = [factories.register_link(curator, dimension, world.profile, passage)
             for _ in range(3)]  # fmt: skip
    assessment = factories.assessment_body(1)
    services.bind_assessment(
        actor=reviewer,
        grounding_id=links[0].grounding_id,
        expected_revision=1,
        assessment=assessment,
    )
    subject = {
        "source": world.passage.canonical_url,
        "answer": "urn:answer:42@2",
        "policy": dimension.disclosure_policy_ref,
        "assessment": assessment["assessment_ref"],
    }[kind]
    body = {
        "dimension": dimension.name,
        "change_ref": f"urn:change:{kind}",
        "kind": kind,
        "subject_ref": subject,
        "observed_at": "2026-12-01T09:00:00Z",
        "reason": "changed",
    }

    def state():
        rows = GroundingLink.objects.filter(dimension=dimension).select_related("current_statement")
        return sorted(
            (str(r.pk), r.revision, r.recheck_state, r.change_ref, r.display_state,
             r.current_statement.rebind_requirement, r.history.count())
            for r in rows
        )  # fmt: skip

    first = services.notify_change(actor=curator, payload=copy.deepcopy(body), batch_size=batch)
    once = state()
    answers = {str(first.notification.affected_links.order_by("link_id").values_list())}
    for _ in range(times - 1):
        again = services.notify_change(actor=curator, payload=copy.deepcopy(body), batch_size=batch)
        assert not again.created
        answers.add(str(again.notification.affected_links.order_by("link_id").values_list()))
    assert state() == once
    assert len(answers) == 1
    assert ChangeNotification.objects.filter(dimension=dimension).count() == 1
    expected = 1 if kind == "assessment" else 3
    assert first.notification.affected == expected


@requires_postgres  # elsewhere the bulk writer saves row by row
@pytest.mark.parametrize("kind", ["answer", "source"])
def test_a_batch_costs_the_same_queries_whatever_its_size(world, kind):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    subject = "urn:answer:42@2" if kind == "answer" else world.passage.canonical_url
    counts = []
    for size, ref in ((2, "urn:change:q2"), (12, "urn:change:q12")):
        dimension = factories.make_dimension()
        curator = factories.user_with_roles(dimension, "curator")
        # Evidence belongs to its Dimension: this one's own passage of the same source.
        passage = factories.make_passage(
            world.passage.text, dimension=dimension, canonical_url=world.passage.canonical_url
        )
        for _ in range(size):
            factories.register_link(curator, dimension, world.profile, passage)
        body = payload(world, dimension=dimension.name, change_ref=ref, kind=kind,
                       subject_ref=subject)  # fmt: skip
        with CaptureQueriesContext(connection) as queries:
            assert services.notify_change(actor=curator, payload=body).notification.affected == size
        counts.append(len(queries.captured_queries))
    assert counts[0] == counts[1]


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_the_same_notification_posted_twice_at_once_revises_each_link_once(world):
    import threading

    register(world, 7)
    barrier = threading.Barrier(2)
    outcomes = []

    def post() -> None:
        from django.db import connection

        try:
            barrier.wait(timeout=30)
            outcome = services.notify_change(
                actor=world.curator, payload=payload(world), batch_size=2
            )
            outcomes.append((outcome.created, outcome.notification.affected))
        finally:
            connection.close()

    threads = [threading.Thread(target=post) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sorted(outcomes) == [(False, 7), (True, 7)]
    assert {row[1] for row in snapshot(world)} == {2}
    assert {row[-1] for row in snapshot(world)} == {2}
    assert ChangeNotificationLink.objects.count() == 7


def test_a_sweep_interrupted_before_its_last_batch_is_finished_by_the_next(world):
    _due(world, 5, "2026-11-30T00:00:00Z")
    now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    values = {
        "change_ref": "urn:change:review-due:interrupted",
        "kind": "review_due",
        "subject_ref": now.isoformat(),
        "observed_at": now,
        "reason": "review_due passed",
    }
    # The first transaction (record and a first batch of 2) committed, then it died.
    from grounding.services.fanout import apply_batch

    with transaction.atomic():
        notification = changes._record(world.curator, world.dimension, values)
        apply_batch(notification, actor=world.curator, batch_size=2)
    [finished] = services.sweep_review_due(now=now + timedelta(minutes=1))
    assert finished.pk == notification.pk
    assert finished.completed_at is not None and finished.affected == 5
    assert {row[1] for row in snapshot(world)} == {2}
    assert services.sweep_review_due(now=now + timedelta(minutes=2)) == []


def test_batches_of_read_keys_are_never_final_and_a_search_ends_the_fan_out(world):
    from grounding.services.fanout import apply_batch, candidate_keys

    register(world, 5)
    values = {
        "change_ref": "urn:change:keys", "kind": "source",
        "subject_ref": world.passage.canonical_url, "observed_at": None, "reason": "keys",
    }  # fmt: skip
    with transaction.atomic():
        notification = changes._record(world.curator, world.dimension, values)
        keys = candidate_keys(notification)
        assert len(keys) == 5 and keys == sorted(keys)
        # A partial batch of read keys says nothing of the end: links affected meanwhile
        # are found by the batch that searches.
        batch = apply_batch(notification, actor=world.curator, batch_size=3, keys=keys[3:])
        assert [key for key, _ in batch.links] == keys[3:] and not batch.is_final(3)
    late = register(world, 1)[0]  # affected after the keys were read
    with transaction.atomic():
        batch = apply_batch(notification, actor=world.curator, batch_size=3, keys=keys[:3])
        assert len(batch.links) == 3 and not batch.is_final(3)
        searched = apply_batch(notification, actor=world.curator, batch_size=3)
        assert [key for key, _ in searched.links] == [late.grounding_id]
        assert searched.is_final(3)
    assert notification.affected_links.count() == 6
    assert {row[1] for row in snapshot(world)} == {2}


@pytest.mark.parametrize("kind", ["source", "answer"])
def test_judging_links_read_by_key_agrees_with_the_search(world, kind):
    # Every way a link can match a source or answer subject, or miss it, once.
    from grounding.services.fanout import _still_affected, affected_links

    subject = "https://example.org/judged"
    evidence = factories.make_passage("Judged text.", dimension=world.dimension,
                                      canonical_url=subject)  # fmt: skip
    other_evidence = factories.make_passage("Other judged.", dimension=world.dimension)

    def external(source_ref, passage_ref=None):
        body = factories.link_payload(world.dimension, world.profile)
        body["passage"]["source_revision_binding"]["source_ref"] = source_ref
        if passage_ref:
            body["passage"]["passage_ref"] = passage_ref
        return body

    bodies = [
        factories.link_payload(world.dimension, world.profile, evidence),  # canonical_url
        factories.link_payload(world.dimension, world.profile, other_evidence),
        external(subject),  # source_ref in the binding
        external("https://example.org/else", passage_ref=subject),  # passage_ref
        external("https://example.org/else"),
    ]
    for body in bodies[::2]:
        body["statement"]["answer_revision_ref"] = subject
    links = services.register_many(actor=world.curator, items=bodies)
    withdrawn = links[2]
    services.withdraw(
        actor=world.curator, grounding_id=withdrawn.pk, expected_revision=1,
        withdrawal={"reason": "judged", "authority_ref": "urn:authority:judged"},
    )  # fmt: skip
    elsewhere = factories.make_dimension()
    foreign = services.register(
        actor=factories.user_with_roles(elsewhere, "curator"),
        payload=external(subject) | {"dimension": elsewhere.name},
    )
    keys = sorted([link.pk for link in links] + [foreign.pk])
    values = {"change_ref": f"urn:change:judged:{kind}", "kind": kind,
              "subject_ref": subject, "observed_at": None, "reason": "judged"}  # fmt: skip
    with transaction.atomic():
        notification = changes._record(world.curator, world.dimension, values)
        expected = list(
            affected_links(notification)
            .filter(pk__in=keys)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        found, _ = _still_affected(notification, keys)
        assert [link.pk for link in found] == expected
        wanted = {"source": [0, 3], "answer": [0, 4]}[kind]  # 2 is withdrawn
        assert sorted(expected) == sorted(links[i].pk for i in wanted)
