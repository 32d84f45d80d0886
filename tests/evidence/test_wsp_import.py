"""import_wsp_document: atomic, idempotent, literal, content-addressed, audited."""

from __future__ import annotations

import hashlib
import unicodedata

import pytest
from django.db import DatabaseError, IntegrityError, connection

from common.kernel.refusals import Refusal
from evidence.anchoring import resolve
from evidence.models import Content, Passage, RetrievalObservation, Source
from evidence.services.wsp_import import import_wsp_document
from policies.models import AuditEvent, Dimension
from tests.evidence.conftest import counts, load


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


EMPTY = {
    "observations": 0,
    "passages": 0,
    "passage_history": 0,
    "content": 0,
    "sources": 0,
    "source_history": 0,
    "applied_audit": 0,
}


@pytest.mark.django_db
def test_first_import_stores_envelope_passages_content_sources_and_audit(curator, search_doc):
    result = import_wsp_document(actor=curator, document=search_doc)

    assert result.created is True
    envelope = RetrievalObservation.objects.get(execution_id="exec-search-001")
    report = result.report
    assert report["import_id"] == str(envelope.observation_id)
    assert report["execution_id"] == "exec-search-001"
    assert report["observations"] == {"received": 3, "created": 3, "duplicates": 0}
    assert report["novelty_score"] == 100
    assert report["rejected"] == 0
    assert [p["observation_id"] for p in report["passages"]] == ["obs-1", "obs-2", "obs-3"]
    assert all(p["duplicate_of"] is None for p in report["passages"])
    assert envelope.report == report
    assert envelope.imported_by == curator
    assert envelope.request_id == "req-exec-search-001"
    assert envelope.cache_status["disposition"] == "miss"
    assert envelope.policy_actions == search_doc["policy_actions"]
    assert envelope.results == search_doc["results"]
    assert envelope.routing_receipt == search_doc["routing_receipt"]
    assert envelope.engine == search_doc["engine"]

    passage = Passage.objects.get(observation_id="obs-1")
    assert str(passage.passage_id) == report["passages"][0]["passage_id"]
    assert passage.passage_ref == "urn:wsp:exec-search-001:obs-1"
    assert passage.kind == "search_result"
    assert passage.source_field == "snippet"
    # Literal: the double space and the tab survive (whitespace_norm is the result's).
    assert passage.text == "The bridge opened in 1932.  It spans\tthe bay."
    assert passage.content_sha256 == sha("The bridge opened in 1932.  It spans\tthe bay.")
    assert passage.locator == passage.observed_url == "https://Example.org/bridge?utm_source=x"
    assert passage.canonical_url == "https://example.org/bridge"
    assert passage.title == "The Bridge"
    assert (passage.provider, passage.endpoint_id) == ("tavily", "tavily.search")
    assert (passage.provider_attempt_id, passage.provider_result_index) == ("att-1", 0)
    assert passage.provider_rank == 1
    assert (passage.provider_score_value, passage.provider_score_semantics) == (
        0.92,
        "provider_local_relevance",
    )
    assert (passage.published_at_raw, passage.published_at_normalized) == (
        "2024-05-01",
        "2024-05-01T00:00:00Z",
    )
    assert passage.provider_fields == {"tavily": {"favicon": "https://example.org/favicon.ico"}}
    assert passage.retrieval_observation == envelope
    assert passage.execution_id == "exec-search-001"
    assert passage.source.canonical_url == "https://example.org/bridge"

    relative = Passage.objects.get(observation_id="obs-2")
    assert (relative.published_at_raw, relative.published_at_normalized) == ("Yesterday", None)
    assert relative.title is None

    assert {(s.canonical_url, s.host) for s in Source.objects.all()} == {
        ("https://example.org/bridge", "example.org"),
        ("https://news.example.com/harbour", "news.example.com"),
    }
    assert counts() == {
        "observations": 1,
        "passages": 3,
        "passage_history": 3,
        "content": 3,
        "sources": 2,
        "source_history": 2,
        "applied_audit": 1,
    }
    event = AuditEvent.objects.get(action="wsp_import")
    assert event.outcome == "applied"
    assert event.actor == curator
    assert event.references == {"execution_id": "exec-search-001", "import_id": report["import_id"]}


@pytest.mark.django_db
def test_identical_replay_returns_the_stored_report_and_writes_nothing(curator, search_doc):
    first = import_wsp_document(actor=curator, document=search_doc)
    before = counts()
    audit_before = AuditEvent.objects.count()

    again = import_wsp_document(actor=curator, document=load("search"))

    assert again.created is False
    assert again.report == first.report
    assert counts() == before
    assert AuditEvent.objects.count() == audit_before


@pytest.mark.django_db
def test_a_different_document_for_a_stored_execution_is_an_execution_conflict(curator, search_doc):
    import_wsp_document(actor=curator, document=search_doc)
    before = counts()
    changed = load("search")
    changed["request_id"] = "req-other"

    with pytest.raises(Refusal) as refused:
        import_wsp_document(actor=curator, document=changed)

    assert refused.value.code == "execution_conflict"
    assert counts() == before
    event = AuditEvent.objects.get(outcome="refused")
    assert (event.action, event.code) == ("wsp_import", "execution_conflict")
    assert event.references == {"execution_id": "exec-search-001"}


@pytest.mark.django_db
def test_same_content_in_a_new_execution_points_at_the_first_passage_and_drops_novelty(
    curator, search_doc
):
    first = import_wsp_document(actor=curator, document=search_doc).report
    second_doc = load("search")
    second_doc["execution_id"] = "exec-search-002"
    second_doc["observations"][1]["snippet"] = "A genuinely new snippet about trams."

    second = import_wsp_document(actor=curator, document=second_doc).report

    first_ids = {p["observation_id"]: p["passage_id"] for p in first["passages"]}
    assert second["observations"] == {"received": 3, "created": 1, "duplicates": 2}
    assert second["novelty_score"] == 33
    assert [(p["observation_id"], p["duplicate_of"]) for p in second["passages"]] == [
        ("obs-1", first_ids["obs-1"]),
        ("obs-2", None),
        ("obs-3", first_ids["obs-3"]),
    ]
    assert Content.objects.count() == 4
    assert Source.objects.count() == 2


@pytest.mark.django_db
def test_duplicate_of_always_names_the_root_passage(curator):
    roots = {}
    for n in (1, 2, 3):
        doc = load("cache_hit")
        doc["execution_id"] = f"exec-cache-{n:03d}"
        report = import_wsp_document(actor=curator, document=doc).report
        roots[n] = report["passages"][0]
    assert roots[1]["duplicate_of"] is None
    assert roots[2]["duplicate_of"] == roots[1]["passage_id"]
    assert roots[3]["duplicate_of"] == roots[1]["passage_id"]
    assert roots[3]["passage_id"] not in {roots[1]["passage_id"], roots[2]["passage_id"]}


@pytest.mark.django_db
def test_content_repeated_within_one_document_is_stored_once_and_counted_seen(curator, search_doc):
    search_doc["observations"][1]["snippet"] = search_doc["observations"][0]["snippet"]

    report = import_wsp_document(actor=curator, document=search_doc).report

    assert report["observations"] == {"received": 3, "created": 2, "duplicates": 1}
    assert report["novelty_score"] == 66
    assert Content.objects.count() == 2
    # duplicate_of names an earlier execution's passage only.
    assert [p["duplicate_of"] for p in report["passages"]] == [None, None, None]


@pytest.mark.django_db
def test_nfd_provider_text_is_stored_byte_for_byte_while_coordinates_use_nfc(curator, extract_doc):
    literal = extract_doc["observations"][0]["text"]
    assert unicodedata.normalize("NFC", literal) != literal

    import_wsp_document(actor=curator, document=extract_doc)

    passage = Passage.objects.get(observation_id="obs-x1")
    assert passage.text.encode("utf-8") == literal.encode("utf-8")
    assert passage.title.encode("utf-8") == "Cafe\u0301 notes".encode()
    assert passage.content_sha256 == sha(literal) != sha(unicodedata.normalize("NFC", literal))
    assert Content.objects.get(sha256=sha(literal)).length == len(literal)

    found = resolve({"type": "TextQuoteSelector", "exact": "Café"}, passage.text)
    assert found.as_anchor_result() == {
        "status": "resolved",
        "match_count": 1,
        "matches": [{"start": 0, "end": 4}],
        "resolver_ref": "urn:grounding:resolver:builtin@1",
        "text_sha256": sha(unicodedata.normalize("NFC", literal)),
    }


@pytest.mark.django_db
def test_cache_hit_keeps_the_origin_attempt_id_literally(curator, cache_doc):
    import_wsp_document(actor=curator, document=cache_doc)
    passage = Passage.objects.get(execution_id="exec-cache-002")
    assert passage.provider_attempt_id == "att-origin-7"
    assert passage.retrieval_observation.cache_status["origin_execution_id"] == "exec-search-000"


@pytest.mark.django_db
def test_a_document_whose_last_observation_is_broken_stores_nothing(curator, search_doc):
    search_doc["observations"][2]["text"] = "an extracted text on a search result"

    with pytest.raises(Refusal) as refused:
        import_wsp_document(actor=curator, document=search_doc)

    assert refused.value.code == "wsp_contract_violation"
    assert [(o.pointer, o.code) for o in refused.value.offenders] == [
        ("/observations/2/text", "presence_rule")
    ]
    assert counts() == EMPTY
    event = AuditEvent.objects.get()
    assert (event.outcome, event.code) == ("refused", "wsp_contract_violation")
    assert event.references == {"execution_id": "exec-search-001"}


@pytest.mark.django_db
def test_a_banned_field_refuses_with_banned_field_and_stores_nothing(curator, search_doc):
    search_doc["observations"][0]["verification"] = {"verdict": "true"}

    with pytest.raises(Refusal) as refused:
        import_wsp_document(actor=curator, document=search_doc)

    assert refused.value.code == "banned_field"
    assert [o.as_dict() for o in refused.value.offenders] == [
        {
            "pointer": "/observations/0/verification",
            "code": "banned_field",
            "detail": "'verification' is banned in WSP v3",
        }
    ]
    assert counts() == EMPTY


@pytest.mark.django_db
def test_import_without_the_curator_role_is_refused_and_audited(reviewer, search_doc):
    with pytest.raises(Refusal) as refused:
        import_wsp_document(actor=reviewer, document=search_doc)

    assert refused.value.code == "role_required"
    assert counts() == EMPTY
    event = AuditEvent.objects.get()
    assert (event.actor, event.outcome, event.code) == (reviewer, "refused", "role_required")


@pytest.mark.django_db(transaction=True)
def test_a_unique_violation_on_the_third_passage_leaves_no_rows_behind(curator, search_doc):
    # An external passage already holds the ref the third observation would get.
    Passage.objects.create(
        dimension=Dimension.objects.get(name="evidence-test"),
        passage_ref="urn:wsp:exec-search-001:obs-3",
        kind="external",
    )

    with pytest.raises(IntegrityError):
        import_wsp_document(actor=curator, document=search_doc)

    assert counts() == dict(EMPTY, passages=1, passage_history=1)
    assert not RetrievalObservation.objects.filter(execution_id="exec-search-001").exists()


@pytest.mark.django_db(transaction=True)
def test_a_database_failure_mid_import_rolls_everything_back(curator, search_doc, failing_trigger):
    with pytest.raises(DatabaseError, match="injected failure"):
        import_wsp_document(actor=curator, document=search_doc)

    assert counts() == EMPTY
    # The same document imports once the fault is gone: nothing half-written blocks it.
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("DROP TRIGGER fail_obs3")
        else:
            cursor.execute("DROP TRIGGER fail_obs3 ON evidence_passage")
    assert import_wsp_document(actor=curator, document=search_doc).created is True
    assert Passage.objects.count() == 3
