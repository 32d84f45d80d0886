import pytest
from django.db import connection

from common.kernel.refusals import Refusal
from grounding import services
from grounding.choices import DisplayState, RecheckState, RecordState
from grounding.models import GroundingLink, PassageBinding, Withdrawal
from tests import factories

WITHDRAWAL = {"reason": "source retracted", "authority_ref": "urn:policy:withdraw@1"}


def test_withdraw_removes_positive_display_and_keeps_history(world, link):
    factories.assess(world.reviewer, link)
    record = services.withdraw(
        actor=world.access_steward,
        grounding_id=link.pk,
        expected_revision=2,
        withdrawal={**WITHDRAWAL, "scope": "display"},
    )
    link = GroundingLink.objects.get(pk=link.pk)
    assert (link.record_state, link.recheck_state, link.display_state) == (
        RecordState.WITHDRAWN,
        RecheckState.WITHDRAWN,
        DisplayState.WITHDRAWN,
    )
    assert (record.grounding_revision, record.recorded_revision) == (2, 3)
    assert record.recorded_by == world.access_steward
    assert GroundingLink.history.filter(grounding_id=link.pk).count() == 3
    assert link.assessments.count() == 1


def test_withdraw_twice_is_refused(world, link):
    services.withdraw(
        actor=world.curator, grounding_id=link.pk, expected_revision=1, withdrawal=WITHDRAWAL
    )
    with pytest.raises(Refusal) as caught:
        services.withdraw(
            actor=world.curator, grounding_id=link.pk, expected_revision=2, withdrawal=WITHDRAWAL
        )
    assert caught.value.code == "link_withdrawn"
    assert Withdrawal.objects.count() == 1


def test_withdraw_needs_reason_and_authority(world, link):
    with pytest.raises(Refusal) as caught:
        services.withdraw(
            actor=world.curator, grounding_id=link.pk, expected_revision=1, withdrawal={}
        )
    assert {o.pointer for o in caught.value.offenders} == {"/reason", "/authority_ref"}


def test_withdraw_by_a_reviewer_is_refused(world, link):
    with pytest.raises(Refusal) as caught:
        services.withdraw(
            actor=world.reviewer, grounding_id=link.pk, expected_revision=1, withdrawal=WITHDRAWAL
        )
    assert caught.value.code == "role_required"


def _all_text_in_database() -> str:
    """Every text and JSON column of every table, history included."""
    chunks = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f'SELECT * FROM "{table}"')
            for row in cursor.fetchall():
                chunks.extend(str(value) for value in row if value is not None)
    return "\n".join(chunks)


def test_dispose_purges_selector_quotes_from_current_and_history_rows(world):
    secret = "sealed clause 7b"
    passage = factories.make_passage(
        f"The contract has a {secret} inside.",
        title="Sealed contract annex",
        dimension=world.dimension,
    )
    payload = factories.link_payload(world.dimension, world.profile, passage)
    payload["anchor"]["source_selector"] = {"type": "TextQuoteSelector", "exact": secret}
    link = services.register(actor=world.curator, payload=payload)
    link = services.revise(
        actor=world.curator,
        grounding_id=link.pk,
        expected_revision=1,
        changes={
            "anchor": {"source_selector": {"type": "TextQuoteSelector", "exact": secret[:10]}},
            "revision_reason": "narrower",
        },
    )
    record = services.dispose(
        actor=world.access_steward,
        grounding_id=link.pk,
        expected_revision=2,
        disposal={"receipt_ref": "urn:storage:receipt:77", "policy_ref": "urn:policy:ret@1"},
    )
    link = GroundingLink.objects.get(pk=link.pk)
    assert link.record_state == RecordState.DISPOSED
    assert link.disposition_receipt_ref == "urn:storage:receipt:77"
    assert record.purged == {
        "passage_bindings": 2,
        "passage_binding_history": 2,
        "passages": 1,
        "passage_history": 2,
        "content": 1,
        "envelopes": 0,
    }
    for binding in PassageBinding.objects.filter(link=link):
        assert binding.source_selector == {"type": "TextQuoteSelector", "purged": True}
    history_selectors = [
        row.source_selector for row in PassageBinding.history.filter(link_id=link.pk)
    ]
    assert all("exact" not in s for s in history_selectors)
    # Neither the quote, nor the excerpt, nor the title survives in any table.
    everything = _all_text_in_database()
    assert secret[:10] not in everything
    assert "The contract has a" not in everything
    assert "Sealed contract annex" not in everything
    passage.refresh_from_db()
    assert (passage.title, passage.content_id, passage.text) == (None, None, None)
    assert passage.content_sha256  # the digest stays: it names bytes, not content


def test_dispose_keeps_the_text_of_a_passage_another_live_link_binds(world):
    passage = factories.make_passage(
        "Shared evidence about the bridge opening.", dimension=world.dimension
    )
    first = factories.register_link(world.curator, world.dimension, world.profile, passage)
    factories.register_link(world.curator, world.dimension, world.profile, passage)
    record = services.dispose(
        actor=world.access_steward,
        grounding_id=first.pk,
        expected_revision=1,
        disposal={"receipt_ref": "urn:storage:receipt:78", "policy_ref": "urn:policy:ret@1"},
    )
    passage.refresh_from_db()
    assert passage.text == "Shared evidence about the bridge opening."
    assert record.purged["passages"] == 0


def test_dispose_needs_the_access_steward(world, link):
    with pytest.raises(Refusal) as caught:
        services.dispose(
            actor=world.curator,
            grounding_id=link.pk,
            expected_revision=1,
            disposal={"receipt_ref": "r", "policy_ref": "p"},
        )
    assert caught.value.code == "role_required"


def test_dispose_purges_an_imported_passage_from_the_retrieval_envelope(world):
    from evidence.models import Passage
    from evidence.services.wsp_import import import_wsp_document
    from grounding.management.demo_data import DOCUMENTS, demo_wsp_response

    import_wsp_document(actor=world.curator, document=demo_wsp_response())
    passage = Passage.objects.get(observation_id="att-demo-1:0")
    payload = factories.link_payload(world.dimension, world.profile, passage)
    payload["anchor"]["source_selector"] = {"type": "TextQuoteSelector", "exact": "steel arch"}
    link = services.register(actor=world.curator, payload=payload)
    record = services.dispose(
        actor=world.access_steward,
        grounding_id=link.pk,
        expected_revision=1,
        disposal={"receipt_ref": "urn:storage:receipt:79", "policy_ref": "urn:policy:ret@1"},
    )
    assert record.purged["envelopes"] == 1
    everything = _all_text_in_database()
    _url, title, text = DOCUMENTS[0]
    assert text[:40] not in everything
    assert title not in everything
    # The other observation of the same execution keeps its text.
    assert DOCUMENTS[1][2][:40] in everything
