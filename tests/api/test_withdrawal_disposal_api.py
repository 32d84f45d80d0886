"""POST …/withdrawal/ (access_steward or curator) and …/disposal/ (access_steward)."""

from grounding.models import PassageBinding
from tests.api.helpers import client_for, if_match, pointers, problem, url

WITHDRAWAL = {"reason": "source retracted", "authority_ref": "urn:policy:retraction@1",
              "scope": "display"}  # fmt: skip
DISPOSAL = {"receipt_ref": "urn:storage:receipt:9", "policy_ref": "urn:policy:retention@1"}


def test_withdrawal_answers_201_and_takes_the_link_off_positive_display(world, link):
    response = client_for(world.access_steward).post(
        url(link.grounding_id, "withdrawal/"), WITHDRAWAL, format="json", **if_match(1)
    )
    assert response.status_code == 201
    assert response["ETag"] == '"2"'
    body = response.json()
    assert body["revision"] == 2
    assert body["reason"] == "source retracted"
    assert body["authority_ref"] == "urn:policy:retraction@1"
    assert body["scope"] == "display"
    assert body["link"]["record_state"] == "withdrawn"
    assert body["link"]["display_state"] == "withdrawn"
    assert body["link"]["withdrawal"]["reason"] == "source retracted"
    assert body["link"]["withdrawal"]["grounding_revision"] == 1


def test_a_curator_may_withdraw_too(world, link):
    response = client_for(world.curator).post(
        url(link.grounding_id, "withdrawal/"), WITHDRAWAL, format="json", **if_match(1)
    )
    assert response.status_code == 201


def test_withdrawal_needs_reason_and_authority(world, link):
    response = client_for(world.curator).post(
        url(link.grounding_id, "withdrawal/"), {"scope": "display"}, format="json", **if_match(1)
    )
    assert pointers(problem(response, 400, "validation_error")) == ["/authority_ref", "/reason"]


def test_a_second_withdrawal_is_refused(world, link):
    client = client_for(world.curator)
    client.post(url(link.grounding_id, "withdrawal/"), WITHDRAWAL, format="json", **if_match(1))
    response = client.post(
        url(link.grounding_id, "withdrawal/"), WITHDRAWAL, format="json", **if_match(2)
    )
    problem(response, 409, "link_withdrawn")


def test_withdrawal_needs_access_steward_or_curator(world, link):
    response = client_for(world.reviewer).post(
        url(link.grounding_id, "withdrawal/"), WITHDRAWAL, format="json", **if_match(1)
    )
    problem(response, 403, "role_required")


def test_disposal_purges_copied_text_and_leaves_a_tombstone(world, link):
    response = client_for(world.access_steward).post(
        url(link.grounding_id, "disposal/"), DISPOSAL, format="json", **if_match(1)
    )
    assert response.status_code == 201
    assert response["ETag"] == '"2"'
    body = response.json()
    assert body["receipt_ref"] == "urn:storage:receipt:9"
    assert body["policy_ref"] == "urn:policy:retention@1"
    assert body["purged"] == {
        "passage_bindings": 1,
        "passage_binding_history": 1,
        "passages": 1,
        "passage_history": 2,
        "content": 1,
        "envelopes": 0,
    }
    # The link now reads as its tombstone (docs/api.md), nothing more.
    tombstone = {
        "grounding_id": str(link.grounding_id),
        "revision": 2,
        "record_state": "disposed",
        "dimension": world.dimension.name,
        "receipt_ref": "urn:storage:receipt:9",
        "policy_ref": "urn:policy:retention@1",
    }
    shown = {k: v for k, v in body["link"].items() if k not in ("observed_at", "disposed_at")}
    assert shown == tombstone
    assert set(body["link"]) == {*tombstone, "observed_at", "disposed_at"}
    history = PassageBinding.history.filter(link_id=link.pk)
    assert all("exact" not in row.source_selector for row in history)
    assert [row.source_selector for row in PassageBinding.objects.filter(link_id=link.pk)] == [
        {"type": "TextQuoteSelector", "purged": True}
    ]
    reader = client_for(world.access_steward)
    for suffix in ("", "revisions/", "revisions/1/", "revisions/2/"):
        past = reader.get(url(link.grounding_id, suffix)).json()
        assert {k: v for k, v in past.items() if k in tombstone} == tombstone, suffix
        assert set(past) == set(body["link"]), suffix


def test_disposal_needs_the_access_steward(world, link):
    response = client_for(world.curator).post(
        url(link.grounding_id, "disposal/"), DISPOSAL, format="json", **if_match(1)
    )
    problem(response, 403, "role_required")


def test_a_second_disposal_is_refused(world, link):
    client = client_for(world.access_steward)
    client.post(url(link.grounding_id, "disposal/"), DISPOSAL, format="json", **if_match(1))
    response = client.post(
        url(link.grounding_id, "disposal/"), DISPOSAL, format="json", **if_match(2)
    )
    problem(response, 409, "link_disposed")


def test_disposal_needs_receipt_and_policy(world, link):
    response = client_for(world.access_steward).post(
        url(link.grounding_id, "disposal/"), {}, format="json", **if_match(1)
    )
    assert pointers(problem(response, 400, "validation_error")) == ["/policy_ref", "/receipt_ref"]
