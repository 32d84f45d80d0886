"""The three lookups a WSP batch makes (stored content, stored sources, earlier
passages of the same texts) find what their querysets find; on PostgreSQL each is
one statement sending its digests or URLs as one array."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from common.kernel.canonical import text_sha256
from evidence.models import Content, Passage, Source
from evidence.services import wsp_write
from evidence.services.wsp_import import import_wsp_document
from tests.evidence.test_wsp_import_bulk import big_document

pytestmark = pytest.mark.django_db


def test_the_lookups_find_what_their_querysets_find(curator, dimension):
    import_wsp_document(actor=curator, document=big_document("exec-look-1"))
    import_wsp_document(actor=curator, document=big_document("exec-look-2", offset=5))
    later = big_document("exec-look-3", offset=10)
    texts = {o["snippet"] for o in later["observations"]} | {"never stored"}
    hashes = {text_sha256(t) for t in texts}

    with CaptureQueriesContext(connection) as seen:
        stored = wsp_write._stored_hashes(hashes)
        sources = wsp_write._stored_sources([(later, "digest")], dimension)
        earlier = wsp_write._EarliestPassages.of(hashes, dimension)
    assert len(seen.captured_queries) == 3

    assert stored == set(Content.objects.filter(sha256__in=hashes).values_list("sha256", flat=True))
    assert 0 < len(stored) < len(hashes)
    urls = {o["url"]["canonical"] for o in later["observations"]}
    mine = Source.objects.filter(dimension=dimension, canonical_url__in=urls)
    assert sources == {s.canonical_url: s for s in mine}
    assert {url: s.source_id for url, s in sources.items()} == {
        s.canonical_url: s.source_id for s in mine
    }
    assert all(not s._state.adding for s in sources.values())
    rows = Passage.objects.filter(dimension=dimension, content_sha256__in=hashes)
    assert earlier.hashes() == set(rows.values_list("content_sha256", flat=True))
    first = rows.order_by("created_at", "passage_id").first()
    assert earlier.root(first.content_sha256, "exec-look-9") == (
        first.duplicate_of_id or first.passage_id
    )
    if connection.vendor == "postgresql":
        for query in seen.captured_queries:
            assert "= ANY($" in query["sql"] and " IN (" not in query["sql"], query["sql"]
