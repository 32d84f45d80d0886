"""The log over HTTP (API.md "Transparency log"): checkpoint, entries, proofs, the
per-revision proof and the public key; members only; bad sizes are 400."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from grounding import services
from policies import governance
from policies.choices import Role
from tests import factories
from tests.api.helpers import client_for, problem, url
from transparency import sequencer
from transparency.verifier import VerifierKey, parse_note, verify_consistency, verify_inclusion

LOG = "/api/v1/log/"


def _b(text: str) -> bytes:
    return base64.b64decode(text)


@pytest.fixture
def logged(world):
    """Three links, one revised, integrated in two runs (checkpoints of 3 and 4)."""
    links = [
        factories.register_link(world.curator, world.dimension, world.profile, world.passage)
        for _ in range(3)
    ]
    sequencer.integrate()
    services.revise(
        actor=world.curator,
        grounding_id=links[0].grounding_id,
        expected_revision=1,
        changes={"revision_reason": "scope", "support": {"support_scope": {"covers": "year"}}},
    )
    sequencer.integrate()
    return links


def _key(client) -> VerifierKey:
    response = client.get(LOG + "public-key")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    return VerifierKey.parse(response.content.decode())


def test_the_checkpoint_is_a_signed_note_of_the_tree(world, logged):
    client = client_for(world.reviewer)
    response = client.get(LOG + "checkpoint", {"dimension": world.dimension.name})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    note = parse_note(response.content.decode())
    assert (note.origin, note.size) == (f"localhost/grounding/{world.dimension.name}", 4)
    assert _key(client).verifies(note)
    # Anyone may read the key; its name is the key name of the checkpoints' signature.
    anonymous = client_for(None).get(LOG + "public-key")
    assert anonymous.status_code == 200
    assert anonymous.content.decode().startswith("localhost/grounding+")
    # A checkpoint whose text was changed no longer verifies.
    forged = response.content.decode().replace("\n4\n", "\n5\n", 1)
    assert not _key(client).verifies(parse_note(forged))


def test_entries_give_each_leaf_s_exact_bytes_and_hash(world, logged):
    body = client_for(world.curator).get(
        LOG + "entries", {"dimension": world.dimension.name, "start": 1, "end": 4}
    )
    entries = body.json()["entries"]
    assert [e["index"] for e in entries] == [1, 2, 3]
    for entry in entries:
        leaf = _b(entry["leaf"])
        assert _b(entry["leaf_hash"]) == hashlib.sha256(b"\x00" + leaf).digest()
        assert json.loads(leaf)["index"] == entry["index"]
        assert "opened in 1932" not in leaf.decode()  # ids and digests, never text
    assert json.loads(_b(entries[-1]["leaf"]))["action"] == "revise"


def test_inclusion_and_consistency_proofs_verify_against_the_checkpoints(world, logged):
    client = client_for(world.curator)
    name = world.dimension.name
    entries = client.get(LOG + "entries", {"dimension": name, "start": 0, "end": 4}).json()
    checkpoint = parse_note(client.get(LOG + "checkpoint", {"dimension": name}).content.decode())
    for entry in entries["entries"]:
        proof = client.get(
            LOG + "proof/inclusion", {"dimension": name, "index": entry["index"], "tree_size": 4}
        ).json()
        assert (proof["index"], proof["tree_size"]) == (entry["index"], 4)
        assert parse_note(proof["checkpoint"]).root == checkpoint.root
        hashes = [_b(h) for h in proof["hashes"]]
        assert verify_inclusion(_b(entry["leaf_hash"]), entry["index"], 4, hashes, checkpoint.root)
    # The proof at the earlier checkpoint's size comes with that checkpoint.
    old = client.get(LOG + "proof/inclusion", {"dimension": name, "index": 1, "tree_size": 3})
    old_note = parse_note(old.json()["checkpoint"])
    assert old_note.size == 3 and _key(client).verifies(old_note)
    consistency = client.get(
        LOG + "proof/consistency", {"dimension": name, "first": 3, "second": 4}
    ).json()
    assert (consistency["first"], consistency["second"]) == (3, 4)
    hashes = [_b(h) for h in consistency["hashes"]]
    assert verify_consistency(3, 4, hashes, old_note.root, checkpoint.root)
    assert not verify_consistency(3, 4, hashes, checkpoint.root, checkpoint.root)


def test_a_revision_s_proof_is_its_leaf_in_the_tree(world, logged):
    link = logged[0]
    client = client_for(world.reviewer)
    for revision, action in ((1, "register"), (2, "revise")):
        response = client.get(url(link.grounding_id, f"revisions/{revision}/proof/"))
        assert response.status_code == 200
        body = response.json()
        assert sorted(body) == ["checkpoint", "hashes", "index", "leaf", "leaf_hash", "tree_size"]
        leaf = _b(body["leaf"])
        fields = json.loads(leaf)
        assert (fields["grounding_id"], fields["revision"]) == (str(link.grounding_id), revision)
        assert fields["action"] == action
        note = parse_note(body["checkpoint"])
        assert note.size == body["tree_size"] == 4
        digest = hashlib.sha256(b"\x00" + leaf).digest()
        assert _b(body["leaf_hash"]) == digest
        hashes = [_b(h) for h in body["hashes"]]
        assert verify_inclusion(digest, body["index"], 4, hashes, note.root)
    problem(client.get(url(link.grounding_id, "revisions/3/proof/")), 404, "not_found")


def test_another_dimension_s_log_is_not_found_as_an_unknown_one(world, logged):
    other = factories.make_dimension()
    stranger = factories.user_with_roles(other, Role.CURATOR)
    client = client_for(stranger)
    foreign = problem(client.get(LOG + "checkpoint", {"dimension": world.dimension.name}), 404,
                      "not_found")  # fmt: skip
    unknown = problem(client.get(LOG + "checkpoint", {"dimension": "no-such"}), 404, "not_found")
    assert foreign == unknown
    for path, query in (
        ("entries", {"start": 0}),
        ("proof/inclusion", {"index": 0}),
        ("proof/consistency", {"first": 0}),
    ):
        body = problem(client.get(LOG + path, {"dimension": world.dimension.name, **query}), 404,
                       "not_found")  # fmt: skip
        assert "4" not in body["detail"]  # nothing tells the size
    link = logged[0]
    problem(client.get(url(link.grounding_id, "revisions/1/proof/")), 404, "not_found")
    problem(client_for(world.outsider).get(LOG + "checkpoint"), 404, "not_found")


@pytest.mark.parametrize(
    ("path", "query", "pointer", "code"),
    [
        ("proof/inclusion", {"index": "-1"}, "/index", "type"),
        ("proof/inclusion", {"index": "1.5"}, "/index", "type"),
        ("proof/inclusion", {"index": "x"}, "/index", "type"),
        ("proof/inclusion", {"index": "٣"}, "/index", "type"),
        ("proof/inclusion", {}, "/index", "required"),
        ("proof/inclusion", {"index": "4"}, "/index", "beyond_log_size"),
        ("proof/inclusion", {"index": "0", "tree_size": "5"}, "/tree_size", "beyond_log_size"),
        ("proof/inclusion", {"index": "2", "tree_size": "2"}, "/index", "inconsistent"),
        ("proof/inclusion", {"index": "1" * 30}, "/index", "range"),
        ("proof/consistency", {"first": "3", "second": "2"}, "/first", "inconsistent"),
        ("proof/consistency", {"first": "1", "second": "9"}, "/second", "beyond_log_size"),
        ("proof/consistency", {"first": "-2"}, "/first", "type"),
        ("entries", {"start": "5"}, "/start", "beyond_log_size"),
        ("entries", {"start": "0", "end": "9"}, "/end", "beyond_log_size"),
        ("entries", {"start": "3", "end": "1"}, "/end", "inconsistent"),
        ("checkpoint", {"dimension": ""}, "/dimension", "length"),
        ("entries", {"dimension": "x" * 64}, "/dimension", "length"),
    ],
)
def test_bad_sizes_are_400_naming_the_parameter(world, logged, path, query, pointer, code):
    response = client_for(world.curator).get(
        LOG + path, {"dimension": world.dimension.name} | query
    )
    body = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [(pointer, code)]


def test_the_dimension_is_needed_only_for_a_reader_of_several(world, logged):
    client = client_for(world.curator)
    assert client.get(LOG + "checkpoint").status_code == 200  # their one Dimension
    other = factories.make_dimension()
    governance.grant_role(actor=None, dimension=other, user=world.curator, role=Role.CURATOR)
    body = problem(client_for(world.curator).get(LOG + "checkpoint"), 400, "dimension_required")
    assert [o["pointer"] for o in body["offenders"]] == ["/dimension"]


def test_an_empty_log_has_a_signed_checkpoint_of_size_zero(world):
    response = client_for(world.curator).get(LOG + "checkpoint")
    note = parse_note(response.content.decode())
    assert (note.size, note.root) == (0, hashlib.sha256(b"").digest())


def test_a_revision_an_evidence_set_made_is_proven_by_the_set_s_leaf(world, link):
    services.create_evidence_set(
        actor=world.curator,
        values={
            "evidence_set_ref": "urn:set:log",
            "dimension": world.dimension.name,
            "members": [{"grounding_id": str(link.pk), "membership_role": "premise"}],
        },
    )
    sequencer.integrate()
    body = client_for(world.curator).get(url(link.pk, "revisions/2/proof/")).json()
    fields = json.loads(_b(body["leaf"]))
    assert (fields["action"], fields["grounding_id"], fields["revision"]) == (
        "create_evidence_set", None, 1,
    )  # fmt: skip
    tables = [c["table"] for c in fields["commitments"]]
    assert "grounding_historicalgroundinglink" in tables
    assert "grounding_historicalevidencesetmembership" in tables
    note = parse_note(body["checkpoint"])
    digest = hashlib.sha256(b"\x00" + _b(body["leaf"])).digest()
    hashes = [_b(h) for h in body["hashes"]]
    assert verify_inclusion(digest, body["index"], note.size, hashes, note.root)
