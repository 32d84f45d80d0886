"""A write of several events (a WSP batch import) commits each row in the leaf of the
event it belongs to: a passage's history row in its own document's import leaf,
found by the import id the event's references name (`sequencer._anchors`)."""

from __future__ import annotations

from evidence.models import Passage
from evidence.services.wsp_import import import_wsp_documents
from tests.evidence.conftest import wsp_document
from transparency import notes, sequencer
from transparency.models import Leaf
from transparency.verifier import verify


def test_each_document_s_passages_are_committed_in_its_own_leaf(world):
    documents = [
        wsp_document(f"anchors-e{n}", [f"anchors {n} text {k}" for k in range(3)],
                     host=f"anchors{n}.example.org")
        for n in range(3)
    ]  # fmt: skip
    results = import_wsp_documents(
        actor=world.curator, documents=documents, dimension=world.dimension
    )
    imports = [r.report["import_id"] for r in results]
    sequencer.integrate()

    leaves = Leaf.objects.filter(action="wsp_import").order_by("index")
    committed = {
        leaf.audit_event: {
            c["row"] for c in leaf.commitments if c["table"] == "evidence_historicalpassage"
        }
        for leaf in leaves
    }
    # The fixture's passage, written earlier in the test's transaction, has no anchor
    # and goes to the write's first event.
    fixture = {
        str(h)
        for h in Passage.history.filter(passage_id=world.passage.pk).values_list(
            "history_id", flat=True
        )
    }
    assert len(committed) == 3
    for leaf, import_id in zip(leaves, imports, strict=True):
        own = {
            str(h)
            for h in Passage.history.filter(retrieval_observation_id=import_id).values_list(
                "history_id", flat=True
            )
        }
        assert len(own) == 3, import_id
        assert committed[leaf.audit_event] - fixture == own
    report = verify(world.dimension.name, verifier_key=notes.signer().verifier_key)
    assert report.ok, [str(p) for p in report.problems]
