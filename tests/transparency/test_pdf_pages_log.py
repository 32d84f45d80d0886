"""A PDF import commits its pages like any passages: each page's history row under
that page's own key, in the import's leaf; a disposal destroys the bound page's key
and the log still verifies."""

from __future__ import annotations

from evidence.models import Passage
from evidence.services.pdf_import import import_pdf_document
from grounding import services
from tests import factories
from tests.evidence.pdfs import report_pdf
from transparency import notes, sequencer
from transparency.models import Leaf, RecordKey
from transparency.verifier import verify


def test_a_pdfs_pages_are_committed_under_their_keys_and_a_disposal_destroys_one(world):
    report = import_pdf_document(
        actor=world.curator,
        file=report_pdf(),
        source_ref="https://example.org/annual-report.pdf",
        dimension=world.dimension,
    ).report
    sequencer.integrate()
    imported = Leaf.objects.get(action="pdf_import")
    pages = {c["row"] for c in imported.commitments if c["table"] == "evidence_historicalpassage"}
    ids = [p["passage_id"] for p in report["pages"]]
    history = Passage.history.filter(passage_id__in=ids)
    # The three pages' rows, and the fixture's passage, written earlier in the test's
    # transaction (an unanchored row goes to the first event after it).
    assert {str(h.history_id) for h in history} <= pages and len(pages) == 4
    keys = {k.subject for k in RecordKey.objects.in_bulk(imported.key_ids).values()}
    assert {f"passage:{i}" for i in ids} <= keys

    page = Passage.objects.get(pk=ids[1])
    link = factories.register_link(world.curator, world.dimension, world.profile, page)
    sequencer.integrate()
    services.dispose(
        actor=world.access_steward,
        grounding_id=link.grounding_id,
        expected_revision=1,
        disposal={"receipt_ref": "urn:receipt:pdf", "policy_ref": "urn:policy:retention@1"},
    )
    sequencer.integrate()
    destroyed = RecordKey.objects.get(subject=f"passage:{page.pk}", destroyed_at__isnull=False)
    assert destroyed.key is None
    result = verify(world.dimension.name, verifier_key=notes.signer().verifier_key)
    assert result.ok, [str(p) for p in result.problems]
    assert f"passage:{page.pk}" in set(result.destroyed)
