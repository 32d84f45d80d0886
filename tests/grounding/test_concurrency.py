"""Concurrent writers on one revision: exactly one wins (PostgreSQL row locks)."""

import threading

import pytest
from django.db import connection

from common.kernel.refusals import Refusal
from grounding import services
from grounding.models import GroundingLink
from policies.models import AuditEvent
from tests import factories
from tests.conftest import requires_postgres

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]


def _race(writers: int, attempt):
    barrier = threading.Barrier(writers)
    outcomes: list[str] = []
    lock = threading.Lock()

    def run(index: int) -> None:
        try:
            barrier.wait()
            attempt(index)
            result = "applied"
        except Refusal as refusal:
            result = refusal.code
        finally:
            connection.close()
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return sorted(outcomes)


def test_two_revisions_on_the_same_expected_revision_exactly_one_applies():
    dimension = factories.make_dimension()
    profile = factories.make_profile()
    from policies.choices import Role

    curator = factories.user_with_roles(dimension, Role.CURATOR)
    link = factories.register_link(curator, dimension, profile)

    def attempt(index: int) -> None:
        services.revise(
            actor=curator,
            grounding_id=link.pk,
            expected_revision=1,
            changes={"owner_ref": f"role:writer-{index}", "revision_reason": f"writer {index}"},
        )

    outcomes = _race(2, attempt)
    assert outcomes == ["applied", "revision_mismatch"]
    link = GroundingLink.objects.get(pk=link.pk)
    assert link.revision == 2
    assert GroundingLink.history.filter(grounding_id=link.pk).count() == 2
    refused = AuditEvent.objects.filter(grounding_id=link.pk, code="revision_mismatch")
    assert refused.count() == 1


def test_many_assessments_on_one_revision_bind_exactly_one():
    dimension = factories.make_dimension()
    profile = factories.make_profile()
    from policies.choices import Role

    curator = factories.user_with_roles(dimension, Role.CURATOR)
    reviewer = factories.user_with_roles(dimension, Role.REVIEWER)
    link = factories.register_link(curator, dimension, profile)

    def attempt(index: int) -> None:
        services.bind_assessment(
            actor=reviewer,
            grounding_id=link.pk,
            expected_revision=1,
            assessment=factories.assessment_body(1, assessment_ref=f"urn:eval:{index}"),
        )

    outcomes = _race(8, attempt)
    assert outcomes.count("applied") == 1
    assert set(outcomes) - {"applied"} == {"revision_mismatch"}
    assert GroundingLink.objects.get(pk=link.pk).assessments.count() == 1
