"""import_wsp_documents: many responses decided as if imported one after another,
the accepted ones written in one transaction.

Most tests import the same documents twice, one by one with import_wsp_document
and as one batch, each time under a fresh namespace (in execution ids, texts and
source URLs), so the two imports never share a row; their outcomes and stored rows
are then compared with the namespace and generated ids replaced by what they name.
"""

from __future__ import annotations

import copy
import itertools
import json
import threading

import pytest
from django.db import DatabaseError, IntegrityError, connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from common.kernel.refusals import Refusal
from evidence.models import Content, Passage, RetrievalObservation, Source
from evidence.services.wsp_import import ImportResult, import_wsp_document, import_wsp_documents
from policies.models import AuditEvent, Dimension
from tests.conftest import requires_postgres, wait_for_lock_waiters
from tests.evidence.conftest import broken, hold_execution, wsp_document

_numbers = itertools.count(1)


def namespace() -> str:
    return f"ns{next(_numbers):05d}x"


def doc(ns: str, execution: int, texts: list[int], **changes) -> dict:
    """Execution `<ns>-e<execution>` carrying texts `<ns> text <k>` from `<ns>.example.org`."""
    return wsp_document(
        f"{ns}-e{execution}",
        [f"{ns} text {k}" for k in texts],
        host=f"{ns}.example.org",
        **changes,
    )


def banned(document: dict) -> dict:
    document["observations"][0]["verification"] = {"verdict": "true"}
    return document


def one_by_one(actor, documents: list) -> list[ImportResult | Refusal]:
    outcomes: list[ImportResult | Refusal] = []
    for document in documents:
        try:
            outcomes.append(import_wsp_document(actor=actor, document=document))
        except Refusal as refusal:
            outcomes.append(refusal)
    return outcomes


def _strip(value, ns: str):
    return json.loads(json.dumps(value).replace(ns, "NS"))


def _names(ns: str) -> tuple[dict[str, str], dict[str, str]]:
    """Passage ids -> "<execution>/<observation>", envelope ids -> execution id."""
    passages = {
        str(p.passage_id): f"{p.execution_id}/{p.observation_id}"
        for p in Passage.objects.filter(execution_id__startswith=ns)
    }
    envelopes = {
        str(e.observation_id): e.execution_id
        for e in RetrievalObservation.objects.filter(execution_id__startswith=ns)
    }
    return passages, envelopes


def _report(report: dict, passages: dict[str, str], envelopes: dict[str, str]) -> dict:
    return {
        **report,
        "import_id": envelopes[report["import_id"]],
        "passages": [
            {
                "observation_id": p["observation_id"],
                "passage_id": passages[p["passage_id"]],
                "duplicate_of": passages[p["duplicate_of"]] if p["duplicate_of"] else None,
            }
            for p in report["passages"]
        ],
    }


def described(outcomes: list, ns: str) -> list:
    """Outcomes with generated ids replaced by what they name."""
    passages, envelopes = _names(ns)
    out = []
    for outcome in outcomes:
        if isinstance(outcome, Refusal):
            offenders = [(o.pointer, o.code) for o in outcome.offenders]
            out.append(["refused", outcome.code, outcome.detail, offenders])
        else:
            state = "created" if outcome.created else "replayed"
            out.append([state, _report(outcome.report, passages, envelopes)])
    return _strip(out, ns)


def stored(ns: str) -> dict:
    """Every row the imports of namespace `ns` left, ids replaced by what they name."""
    passages, envelopes = _names(ns)
    rows = Passage.objects.filter(execution_id__startswith=ns).select_related("content", "source")
    events = AuditEvent.objects.filter(references__execution_id__startswith=ns)
    return _strip(
        {
            "envelopes": sorted(
                [e.execution_id, e.request_id, _report(e.report, passages, envelopes)]
                for e in RetrievalObservation.objects.filter(execution_id__startswith=ns)
            ),
            "passages": sorted(
                [
                    passages[str(p.passage_id)],
                    p.passage_ref,
                    p.content.text,
                    p.source.canonical_url,
                    passages[str(p.duplicate_of_id)] if p.duplicate_of_id else None,
                ]
                for p in rows
            ),
            "passage_history": sorted(
                [passages[str(h.passage_id)], h.history_type, h.history_change_reason]
                for h in Passage.history.filter(execution_id__startswith=ns)
            ),
            "content": sorted(Content.objects.filter(text__startswith=ns).values_list("text")),
            "sources": sorted(
                Source.objects.filter(canonical_url__contains=ns).values_list("canonical_url")
            ),
            "source_history": Source.history.filter(canonical_url__contains=ns).count(),
            "audit": sorted(
                [
                    e.action,
                    e.outcome,
                    e.code,
                    e.references["execution_id"],
                    envelopes.get(e.references.get("import_id")),
                ]
                for e in events
            ),
        },
        ns,
    )


def counts(ns: str) -> dict[str, int]:
    events = AuditEvent.objects.filter(references__execution_id__startswith=ns)
    return {
        "envelopes": RetrievalObservation.objects.filter(execution_id__startswith=ns).count(),
        "passages": Passage.objects.filter(execution_id__startswith=ns).count(),
        "passage_history": Passage.history.filter(execution_id__startswith=ns).count(),
        "content": Content.objects.filter(text__startswith=ns).count(),
        "sources": Source.objects.filter(canonical_url__contains=ns).count(),
        "source_history": Source.history.filter(canonical_url__contains=ns).count(),
        "applied_audit": events.filter(outcome="applied").count(),
        "refused_audit": events.filter(outcome="refused").count(),
    }


def nothing_written(*, refused_audit: int) -> dict[str, int]:
    """`counts` of a namespace where nothing was stored and `refused_audit` refusals
    were audited."""
    stored = ("envelopes", "passages", "passage_history", "content", "sources")
    return {**dict.fromkeys((*stored, "source_history", "applied_audit"), 0),
            "refused_audit": refused_audit}  # fmt: skip


def mixed(ns: str) -> list[dict]:
    return [
        doc(ns, 1, [1, 2]),  # new
        broken(doc(ns, 2, [3])),  # contract violation
        doc(ns, 1, [1, 2]),  # replay of document 0, earlier in the batch
        doc(ns, 3, [2, 3, 3]),  # new; text 2 came with document 0
        doc(ns, 1, [1, 2], request_id="other"),  # conflict with document 0
        doc(ns, 0, [0]),  # replay of a stored execution
        doc(ns, 0, [0], request_id="other"),  # conflict with a stored execution
        banned(doc(ns, 4, [4])),  # banned field
    ]


@pytest.mark.django_db
def test_a_mixed_batch_gives_every_document_the_outcome_and_rows_of_importing_it_in_turn(
    curator,
):
    sequential, batched = namespace(), namespace()
    for ns in (sequential, batched):
        import_wsp_document(actor=curator, document=doc(ns, 0, [0]))

    expected = described(one_by_one(curator, mixed(sequential)), sequential)
    outcomes = import_wsp_documents(actor=curator, documents=mixed(batched))
    got = described(outcomes, batched)

    assert got == expected
    assert [o[1] if o[0] == "refused" else o[0] for o in got] == [
        "created",
        "wsp_contract_violation",
        "replayed",
        "created",
        "execution_conflict",
        "replayed",
        "execution_conflict",
        "banned_field",
    ]
    assert got[1][3] == [["/observations/0/provider_attempt_id", "fk_unresolved"]]
    assert got[2][1] == got[0][1]
    assert got[3][1]["observations"] == {"received": 3, "created": 1, "duplicates": 2}
    # Text 2 points at document 0's passage; text 3 is new (document 1 was refused),
    # and its repeat inside document 3 names no passage of its own execution.
    assert [p["duplicate_of"] for p in got[3][1]["passages"]] == ["NS-e1/obs-2", None, None]
    assert got[4][2] == "execution NS-e1 was already imported with a different document."
    assert got[5][1]["execution_id"] == "NS-e0"
    assert stored(batched) == stored(sequential)
    assert counts(batched) == {
        "envelopes": 3,
        "passages": 6,
        "passage_history": 6,
        "content": 4,
        "sources": 3,
        "source_history": 3,
        "applied_audit": 3,
        "refused_audit": 4,
    }


@pytest.mark.django_db
def test_content_of_earlier_documents_in_the_batch_counts_as_seen_and_is_pointed_at(curator):
    ns = namespace()
    first = import_wsp_document(actor=curator, document=doc(ns, 0, [0])).report
    stored_root = first["passages"][0]["passage_id"]

    a, b, c = import_wsp_documents(
        actor=curator,
        documents=[doc(ns, 1, [1, 2, 0]), doc(ns, 2, [2, 3]), doc(ns, 3, [1, 3, 0, 3])],
    )

    root = {
        (o.report["execution_id"], p["observation_id"]): p["passage_id"]
        for o in (a, b, c)
        for p in o.report["passages"]
    }
    assert (a.created, b.created, c.created) == (True, True, True)
    assert a.report["observations"] == {"received": 3, "created": 2, "duplicates": 1}
    assert a.report["novelty_score"] == 66
    assert b.report["observations"] == {"received": 2, "created": 1, "duplicates": 1}
    assert c.report["observations"] == {"received": 4, "created": 0, "duplicates": 4}
    assert c.report["novelty_score"] == 0
    assert [p["duplicate_of"] for p in a.report["passages"]] == [None, None, stored_root]
    assert [p["duplicate_of"] for p in b.report["passages"]] == [
        root[(f"{ns}-e1", "obs-2")],
        None,
    ]
    # Stored rows come first (text 0), then the earliest earlier document of the batch.
    assert [p["duplicate_of"] for p in c.report["passages"]] == [
        root[(f"{ns}-e1", "obs-1")],
        root[(f"{ns}-e2", "obs-2")],
        stored_root,
        root[(f"{ns}-e2", "obs-2")],
    ]
    for outcome in (a, b, c):
        envelope = RetrievalObservation.objects.get(execution_id=outcome.report["execution_id"])
        assert envelope.report == outcome.report
    duplicate_of = dict(
        Passage.objects.filter(execution_id=f"{ns}-e3").values_list(
            "observation_id", "duplicate_of_id"
        )
    )
    assert {k: str(v) for k, v in duplicate_of.items()} == {
        p["observation_id"]: p["duplicate_of"] for p in c.report["passages"]
    }
    assert counts(ns) == {
        "envelopes": 4,
        "passages": 10,
        "passage_history": 10,
        "content": 4,
        "sources": 4,
        "source_history": 4,
        "applied_audit": 4,
        "refused_audit": 0,
    }


@pytest.mark.django_db
def test_a_batch_without_the_curator_role_refuses_and_audits_every_document(reviewer):
    ns = namespace()
    outcomes = import_wsp_documents(
        actor=reviewer, documents=[doc(ns, 1, [1]), broken(doc(ns, 2, [2])), doc(ns, 1, [1])]
    )

    assert [o.code for o in outcomes] == ["role_required"] * 3
    assert len({id(o) for o in outcomes}) == 3
    assert counts(ns) == nothing_written(refused_audit=3)


@pytest.mark.django_db
def test_an_empty_batch_imports_nothing(curator, django_assert_num_queries):
    with django_assert_num_queries(0):
        assert import_wsp_documents(actor=curator, documents=[]) == []


@pytest.mark.django_db
def test_a_batch_is_written_with_one_statement_per_table(curator, django_assert_num_queries):
    ns = namespace()
    documents = [doc(ns, n, [n, n + 1]) for n in range(1, 6)]
    # The curator's memberships (their one Dimension and roles in it: one query,
    # policies.memberships) and stored executions; then the transaction (a savepoint
    # pair in a test): stored content, sources, the Dimension's earlier passages;
    # envelopes, content (in a savepoint of its own), sources and passages with their
    # history rows, audit events; then the write queued for the transparency log's
    # sequencer (one row) and the event feed's outbox: on PostgreSQL one statement for
    # both (common.kernel.along), on SQLite the queued row and the outbox's ORM path (the
    # passages, the events; the delivery workers write the deliveries).
    log_and_feed = 1 if connection.vendor == "postgresql" else 3
    with django_assert_num_queries(16 + log_and_feed):
        outcomes = import_wsp_documents(actor=curator, documents=documents)
    assert [o.created for o in outcomes] == [True] * 5
    assert counts(ns)["applied_audit"] == 5


@pytest.mark.django_db(transaction=True)
def test_a_unique_violation_falls_back_to_importing_the_documents_one_by_one(curator):
    sequential, batched = namespace(), namespace()
    for ns in (sequential, batched):
        # An external passage already holds the ref of the second document's passage.
        Passage.objects.create(
            dimension=Dimension.objects.get(name="evidence-test"),
            passage_ref=f"urn:wsp:{ns}-e2:obs-1",
            kind="external",
        )

    with pytest.raises(IntegrityError):
        one_by_one(curator, [doc(sequential, n, [n]) for n in (1, 2, 3)])
    with pytest.raises(IntegrityError):
        import_wsp_documents(actor=curator, documents=[doc(batched, n, [n]) for n in (1, 2, 3)])

    # The first document imported on its own before the second failed, as one by one.
    assert stored(batched) == stored(sequential)
    assert counts(batched) == {
        "envelopes": 1,
        "passages": 1,
        "passage_history": 1,
        "content": 1,
        "sources": 1,
        "source_history": 1,
        "applied_audit": 1,
        "refused_audit": 0,
    }


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_a_database_failure_in_the_batch_write_leaves_none_of_its_documents(
    curator, failing_trigger
):
    # (On SQLite the trigger's abort is a constraint error: the one-by-one fallback.)
    ns = namespace()
    documents = [doc(ns, 1, [1]), doc(ns, 2, [2, 3, 4]), broken(doc(ns, 3, [5]))]

    with pytest.raises(DatabaseError, match="injected failure"):
        import_wsp_documents(actor=curator, documents=documents)

    # Only the refusal, decided before the write, stays (with its audit event).
    assert counts(ns) == nothing_written(refused_audit=1)
    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER fail_obs3 ON evidence_passage")
    outcomes = import_wsp_documents(actor=curator, documents=documents)
    assert [getattr(o, "created", None) for o in outcomes] == [True, True, None]
    assert counts(ns)["passages"] == 4


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_a_batch_losing_an_execution_to_a_concurrent_import_replays_it_and_imports_the_rest(
    curator,
):
    """The batch reads (nothing stored), then waits on a held envelope row of its first
    execution while a concurrent import of its second commits; the batch's write then
    hits the unique execution id and the documents are imported one by one."""
    ns = namespace()
    first, contested = doc(ns, 1, [1, 2]), doc(ns, 2, [2, 3])
    outcomes: dict[str, object] = {}
    held, release = threading.Event(), threading.Event()

    def run(name, call) -> None:
        try:
            outcomes[name] = call()
        except Exception as error:  # recorded, asserted below
            outcomes[name] = error
        finally:
            connection.close()

    holder = threading.Thread(
        target=run, args=("holder", lambda: hold_execution(f"{ns}-e1", held, release))
    )
    batch = threading.Thread(
        target=run,
        args=("batch", lambda: import_wsp_documents(actor=curator, documents=[first, contested])),
    )
    holder.start()
    try:
        assert held.wait(timeout=30)
        batch.start()
        wait_for_lock_waiters(1)
        single = import_wsp_document(actor=curator, document=copy.deepcopy(contested))
    finally:
        release.set()
        holder.join(timeout=60)
    batch.join(timeout=60)

    assert single.created is True
    batch_first, batch_contested = outcomes["batch"]
    assert batch_first.created is True
    assert batch_contested.created is False
    assert batch_contested.report == single.report
    assert counts(ns) == {
        "envelopes": 2,
        "passages": 4,
        "passage_history": 4,
        "content": 3,
        "sources": 2,
        "source_history": 2,
        "applied_audit": 2,
        "refused_audit": 0,
    }


# A small pool: three executions, each in two versions ("b" conflicts with "a") and
# a broken one; texts overlap across executions and repeat inside one.
POOL_TEXTS = {
    1: {"a": [1, 2], "b": [2, 3]},
    2: {"a": [3, 1, 3], "b": [4]},
    3: {"a": [5], "b": [1, 5]},
}
draw = st.tuples(st.sampled_from([1, 2, 3]), st.sampled_from(["a", "b", "broken"]))


def pooled(ns: str, execution: int, version: str) -> dict:
    if version == "broken":
        return broken(pooled(ns, execution, "a"))
    return doc(ns, execution, POOL_TEXTS[execution][version], request_id=f"{ns}-{version}")


@pytest.mark.django_db
@settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    # Each example works in fresh namespaces, so the shared database does not leak.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(before=st.lists(draw, max_size=3), batch=st.lists(draw, max_size=8))
def test_batched_outcomes_and_rows_equal_one_by_one_imports(curator, before, batch):
    sequential, batched = namespace(), namespace()
    for ns in (sequential, batched):
        one_by_one(curator, [pooled(ns, *d) for d in before])

    expected = one_by_one(curator, [pooled(sequential, *d) for d in batch])
    got = import_wsp_documents(actor=curator, documents=[pooled(batched, *d) for d in batch])

    assert described(got, batched) == described(expected, sequential)
    assert stored(batched) == stored(sequential)
