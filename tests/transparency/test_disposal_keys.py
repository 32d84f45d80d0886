"""A WSP import commits its passages under their own keys; a disposal that purges a
passage's text destroys that key with the link's, and the log still verifies (both
databases)."""

from __future__ import annotations

from evidence.models import Passage
from evidence.services.wsp_import import import_wsp_document
from grounding import services
from grounding.management.demo_data import demo_wsp_response
from tests import factories
from transparency import notes, sequencer
from transparency.models import Leaf, RecordKey
from transparency.verifier import verify


def test_disposal_destroys_the_purged_passage_s_key_and_the_log_verifies(world):
    document = demo_wsp_response()
    document["execution_id"] = "exec-log-keys"
    import_wsp_document(actor=world.curator, document=document, dimension=world.dimension)
    sequencer.integrate()
    imported = Leaf.objects.get(action="wsp_import")
    passages = [c for c in imported.commitments if c["table"] == "evidence_historicalpassage"]
    # The document's passages, and the fixture's, written earlier in the transaction.
    documents = Passage.objects.filter(execution_id="exec-log-keys").count()
    assert len(passages) == documents + 1
    keys = RecordKey.objects.in_bulk(imported.key_ids)
    passage = Passage.objects.filter(execution_id="exec-log-keys").order_by("created_at").first()
    subject = f"passage:{passage.passage_id}"
    assert subject in {k.subject for k in keys.values()}

    link = factories.register_link(world.curator, world.dimension, world.profile, passage)
    sequencer.integrate()
    services.dispose(
        actor=world.access_steward,
        grounding_id=link.grounding_id,
        expected_revision=1,
        disposal={"receipt_ref": "urn:receipt:keys", "policy_ref": "urn:policy:retention@1"},
    )
    sequencer.integrate()
    destroyed = RecordKey.objects.get(subject=subject, destroyed_at__isnull=False)
    assert destroyed.key is None
    disposal = Leaf.objects.get(action="dispose")
    assert {c["row"] for c in disposal.commitments if c["table"] == "grounding_disposal"} == {
        str(destroyed.destroyed_by)
    }
    # The disposal's own rows (the purged passage row among them) have fresh keys.
    fresh = RecordKey.objects.get(subject=subject, destroyed_at__isnull=True)
    assert fresh.pk in disposal.key_ids
    report = verify(world.dimension.name, verifier_key=notes.signer().verifier_key)
    assert report.ok, [str(p) for p in report.problems]
    # The link's three rows at registration and the passage's import row are withheld.
    assert report.withheld == 4
    assert set(report.destroyed) == {f"link:{link.grounding_id}", subject}
