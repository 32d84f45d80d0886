"""import_wsp_document on a response large enough for the bulk (COPY) write path.

The fixtures carry at most three observations, below common.kernel.bulk.COPY_MIN_ROWS;
these documents carry twenty, so on PostgreSQL sources, passages and their history
rows go through COPY. Each test states the exact rows it expects.
"""

from __future__ import annotations

import copy
import threading

import pytest
from django.db import DatabaseError, IntegrityError, connection

from common.kernel.bulk import COPY_MIN_ROWS
from evidence.models import Passage, Source
from evidence.services.wsp_import import import_wsp_document
from policies.models import Dimension
from tests.conftest import requires_postgres, wait_for_lock_waiters
from tests.evidence.conftest import counts, hold_execution, load

OBSERVATIONS = 20
SOURCES = 16  # observation i is taken from source i % 16
TEXTS = 15  # and carries text number i % 15 (+ offset)


# What one `big_document()` stores: 20 passages over 15 distinct texts and 16 sources.
ONE_BIG_DOCUMENT = {
    "observations": 1,
    "passages": 20,
    "passage_history": 20,
    "content": 15,
    "sources": 16,
    "source_history": 16,
    "applied_audit": 1,
}


def big_document(execution_id: str = "exec-bulk-001", offset: int = 0) -> dict:
    """The search fixture with twenty observations, sixteen sources and fifteen texts."""
    document = load("search")
    template = document["observations"][0]
    document["execution_id"] = execution_id
    document["request_id"] = f"req-{execution_id}"
    document["observations"] = []
    for i in range(1, OBSERVATIONS + 1):
        observation = copy.deepcopy(template)
        observation["observation_id"] = f"obs-{i}"
        observation["provider_result_index"] = i
        observation["provider_rank"] = i
        url = f"https://bulk.example.org/{i % SOURCES}"
        observation["url"] = {"observed": f"{url}?utm=1", "canonical": url}
        observation["snippet"] = f"Passage text number {i % TEXTS + offset}."
        document["observations"].append(observation)
    # Results and policy actions name fixture observations: not needed here.
    document["results"] = []
    document["policy_actions"] = []
    return document


EMPTY = dict.fromkeys(
    ["observations", "passages", "passage_history", "content", "sources", "source_history"], 0
) | {"applied_audit": 0}


def test_the_big_document_is_large_enough_for_the_bulk_path():
    assert OBSERVATIONS >= COPY_MIN_ROWS
    assert SOURCES >= COPY_MIN_ROWS


@pytest.mark.django_db
def test_a_large_import_writes_every_row_and_one_history_row_per_passage_and_source(curator):
    result = import_wsp_document(actor=curator, document=big_document())

    assert result.created is True
    assert result.report["observations"] == {"received": 20, "created": 15, "duplicates": 5}
    assert result.report["novelty_score"] == 75
    assert counts() == ONE_BIG_DOCUMENT
    passages = {p.passage_id: p for p in Passage.objects.all()}
    for row in Passage.history.all():
        passage = passages[row.passage_id]
        assert (row.history_type, row.history_change_reason) == ("+", "wsp_import")
        assert row.history_user_id == curator.pk
        assert (row.passage_ref, row.content_sha256, row.source_id, row.observation_id) == (
            passage.passage_ref,
            passage.content_sha256,
            passage.source_id,
            passage.observation_id,
        )
    sources = {s.source_id: s for s in Source.objects.all()}
    for row in Source.history.all():
        assert (row.history_type, row.history_change_reason) == ("+", "wsp_import")
        assert row.history_user_id == curator.pk
        assert row.canonical_url == sources[row.source_id].canonical_url
    passage = Passage.objects.get(observation_id="obs-7")
    assert passage.passage_ref == "urn:wsp:exec-bulk-001:obs-7"
    assert passage.source.canonical_url == "https://bulk.example.org/7"
    assert passage.source.host == "bulk.example.org"
    assert passage.text == "Passage text number 7."
    assert passage.duplicate_of_id is None
    # Observation 17 comes from observation 1's source: one Source row, shared.
    shared = Passage.objects.filter(observation_id__in=["obs-1", "obs-17"])
    assert len({p.source_id for p in shared}) == 1
    assert [p["observation_id"] for p in result.report["passages"]] == [
        f"obs-{i}" for i in range(1, 21)
    ]


@pytest.mark.django_db
def test_a_large_replay_writes_nothing(curator):
    first = import_wsp_document(actor=curator, document=big_document())
    before = counts()

    again = import_wsp_document(actor=curator, document=big_document())

    assert (again.created, again.report) == (False, first.report)
    assert counts() == before


@pytest.mark.django_db
def test_a_second_large_import_reuses_sources_and_points_repeats_at_the_first(curator):
    import_wsp_document(actor=curator, document=big_document("exec-bulk-001"))
    # Texts 10..24 now: 10..14 were stored by the first import, 15..24 are new.
    second = import_wsp_document(actor=curator, document=big_document("exec-bulk-002", 10))

    assert second.report["observations"] == {"received": 20, "created": 10, "duplicates": 10}
    assert counts() == {
        "observations": 2,
        "passages": 40,
        "passage_history": 40,
        "content": 25,
        "sources": 16,
        "source_history": 16,
        "applied_audit": 2,
    }
    first_by_text = {}
    for passage in Passage.objects.filter(execution_id="exec-bulk-001"):
        first_by_text.setdefault(passage.content_sha256, set()).add(passage.passage_id)
    repeats = Passage.objects.filter(execution_id="exec-bulk-002", duplicate_of__isnull=False)
    # Observations 1-4, 15 and 16-19 carry texts 10..14; 20 repeats a new text (15)
    # of its own document, which is no earlier passage's duplicate.
    assert repeats.count() == 9
    for passage in repeats:
        assert passage.duplicate_of_id in first_by_text[passage.content_sha256]


@pytest.mark.django_db(transaction=True)
def test_a_unique_violation_inside_a_large_import_is_an_integrity_error_leaving_nothing(curator):
    Passage.objects.create(
        dimension=Dimension.objects.get(name="evidence-test"),
        passage_ref="urn:wsp:exec-bulk-001:obs-18",
        kind="external",
    )

    # A django.db IntegrityError, whichever way the rows were written.
    with pytest.raises(IntegrityError):
        import_wsp_document(actor=curator, document=big_document())

    assert counts() == dict(EMPTY, passages=1, passage_history=1)


@pytest.mark.django_db(transaction=True)
def test_a_database_failure_inside_a_large_import_rolls_everything_back(curator, failing_trigger):
    with pytest.raises(DatabaseError, match="injected failure"):
        import_wsp_document(actor=curator, document=big_document())

    assert counts() == EMPTY


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_imports_of_one_large_document_store_it_once(curator):
    """Both pass the replay check before either commits: an uncommitted envelope of the
    same execution holds both at its unique key until it rolls back; then one import
    commits and the other must meet an IntegrityError and replay the winner."""
    document = big_document()
    held, release = threading.Event(), threading.Event()
    outcomes: list[object] = []
    lock = threading.Lock()

    def hold_the_execution() -> None:
        try:
            hold_execution(document["execution_id"], held, release)
        finally:
            connection.close()

    def run() -> None:
        try:
            outcome: object = import_wsp_document(actor=curator, document=copy.deepcopy(document))
        except Exception as error:  # recorded, asserted below
            outcome = error
        finally:
            connection.close()
        with lock:
            outcomes.append(outcome)

    holder = threading.Thread(target=hold_the_execution)
    holder.start()
    threads = [threading.Thread(target=run) for _ in range(2)]
    try:
        assert held.wait(timeout=30)
        for thread in threads:
            thread.start()
        wait_for_lock_waiters(2)
    finally:
        release.set()
        holder.join(timeout=60)
    for thread in threads:
        thread.join(timeout=60)

    assert sorted(getattr(o, "created", o) for o in outcomes) == [False, True]
    assert outcomes[0].report == outcomes[1].report
    assert counts() == ONE_BIG_DOCUMENT
