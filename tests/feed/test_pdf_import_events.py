"""A PDF import is an import like a WSP one in the event feed: one
`org.grounding.passage.imported` event per page, naming the page and the import (its
document), in the importing Dimension."""

from __future__ import annotations

from evidence.services.pdf_import import import_pdf_document
from feed.models import Event
from tests.evidence.pdfs import report_pdf


def test_each_page_of_an_imported_pdf_is_a_passage_imported_event(world):
    report = import_pdf_document(
        actor=world.curator,
        file=report_pdf(),
        source_ref="https://example.org/annual-report.pdf",
        dimension=world.dimension,
    ).report
    events = Event.objects.filter(type="org.grounding.passage.imported").order_by("subject")
    pages = sorted(p["passage_id"] for p in report["pages"])
    assert [e.subject for e in events] == pages
    assert {e.dimension_id for e in events} == {world.dimension.pk}
    assert sorted((e.data["passage_id"], e.data["import_id"]) for e in events) == [
        (page, report["document_id"]) for page in pages
    ]
