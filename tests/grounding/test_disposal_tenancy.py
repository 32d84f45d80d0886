"""Disposal purges the disposing Dimension's copies of a text only (API.md "Tenancy").

Content is stored once per digest for every Dimension; each Dimension's passages,
their history rows and its envelopes are its own copies. Disposing a link in one
Dimension purges that Dimension's copies no undisposed link of it binds, and
`purged` counts them; another Dimension's copies of the same bytes are untouched.
"""

from __future__ import annotations

import pytest

from evidence.models import Content, Passage, RetrievalObservation
from evidence.services.wsp_import import import_wsp_document
from grounding import services
from grounding.management.demo_data import DOCUMENTS, demo_wsp_response
from policies.choices import Role
from tests import factories

DISPOSAL = {"receipt_ref": "urn:storage:receipt:t1", "policy_ref": "urn:policy:ret@1"}
URL, TITLE, TEXT = DOCUMENTS[0]


@pytest.fixture
def other(world):
    """A second Dimension that imported the same WSP response (same bytes)."""
    dimension = factories.make_dimension()
    curator = factories.user_with_roles(dimension, Role.CURATOR)
    import_wsp_document(actor=curator, document=demo_wsp_response(), dimension=dimension)
    return dimension, curator


def _bound_link(world):
    import_wsp_document(
        actor=world.curator, document=demo_wsp_response(), dimension=world.dimension
    )
    passage = Passage.objects.get(dimension=world.dimension, observation_id="att-demo-1:0")
    payload = factories.link_payload(world.dimension, world.profile, passage)
    payload["anchor"]["source_selector"] = {"type": "TextQuoteSelector", "exact": "steel arch"}
    return services.register(actor=world.curator, payload=payload), passage


def _copies(dimension) -> dict:
    """What the Dimension holds of the first document: passage, history, envelope text."""
    passage = Passage.objects.get(dimension=dimension, observation_id="att-demo-1:0")
    history = Passage.history.filter(passage_id=passage.pk)
    envelope = RetrievalObservation.objects.get(dimension=dimension)
    return {
        "text": passage.text,
        "title": passage.title,
        "history": sorted((row.content_id, row.title) for row in history),
        "envelope_text": envelope.results[0]["text"].get("text"),
    }


def test_disposal_leaves_another_dimensions_unbound_copy_of_the_same_text(world, other):
    dimension, _ = other
    before = _copies(dimension)
    link, passage = _bound_link(world)

    record = services.dispose(
        actor=world.access_steward, grounding_id=link.pk, expected_revision=1, disposal=DISPOSAL
    )

    # Only the disposing Dimension's rows are counted: its passage, that passage's
    # history rows (the import's and the purge's), its envelope; the content row
    # stays, the other Dimension still holds it.
    assert record.purged == {
        "passage_bindings": 1,
        "passage_binding_history": 1,
        "passages": 1,
        "passage_history": 2,
        "content": 0,
        "envelopes": 1,
    }
    assert before == {
        "text": TEXT,
        "title": TITLE,
        "history": [(Passage.objects.get(pk=passage.pk).content_sha256, TITLE)],
        "envelope_text": TEXT,
    }
    assert _copies(dimension) == before
    assert Content.objects.filter(text=TEXT).count() == 1
    passage.refresh_from_db()
    assert (passage.text, passage.title) == (None, None)
    mine = RetrievalObservation.objects.get(dimension=world.dimension)
    assert mine.results[0]["text"] == {
        "text_sha256": passage.content_sha256,
        "origin": mine.results[0]["text"]["origin"],
        "purged": True,
    }


def test_disposal_purges_its_own_copy_even_while_another_dimension_binds_the_text(world, other):
    dimension, curator = other
    theirs = Passage.objects.get(dimension=dimension, observation_id="att-demo-1:0")
    factories.register_link(curator, dimension, world.profile, theirs)
    link, passage = _bound_link(world)
    # The disposing Dimension's unbound occurrence of the text: the other Dimension's
    # link binds the same bytes, but no link of the disposing Dimension binds it.
    twin = factories.make_passage(TEXT, title="A copy", dimension=world.dimension)

    record = services.dispose(
        actor=world.access_steward, grounding_id=link.pk, expected_revision=1, disposal=DISPOSAL
    )

    assert (record.purged["passages"], record.purged["envelopes"]) == (2, 1)
    passage.refresh_from_db()
    twin.refresh_from_db()
    assert (passage.text, passage.title, twin.text, twin.title) == (None, None, None, None)
    assert not Passage.history.filter(passage_id=passage.pk, title=TITLE).exists()
    theirs.refresh_from_db()
    assert (theirs.text, theirs.title) == (TEXT, TITLE)
    assert _copies(dimension)["envelope_text"] == TEXT


def test_disposal_purges_the_disposing_dimensions_other_unbound_occurrences(world, other):
    dimension, _ = other
    link, _ = _bound_link(world)
    # Another occurrence of the same bytes in the disposing Dimension, bound by no link.
    twin = factories.make_passage(TEXT, title="A copy", dimension=world.dimension)

    record = services.dispose(
        actor=world.access_steward, grounding_id=link.pk, expected_revision=1, disposal=DISPOSAL
    )

    assert (record.purged["passages"], record.purged["passage_history"]) == (2, 4)
    twin.refresh_from_db()
    assert (twin.text, twin.title) == (None, None)
    assert _copies(dimension)["text"] == TEXT
