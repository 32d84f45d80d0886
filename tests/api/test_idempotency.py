"""Idempotency keys (API.md "Retries and idempotency", issue 27 item 1): a retry with
the same `Idempotency-Key` and body answers the first answer again and writes
nothing; another body is 422; a key still running is 409; keys are per caller,
kept GROUNDING_IDEMPOTENCY_TTL_HOURS, stored with the write, swept by a command."""

from __future__ import annotations

import io
import json
import threading
from datetime import timedelta

import pytest
import requests
from django.core.management import call_command
from django.db import connections
from django.utils import timezone

from evidence.models import RetrievalObservation
from grounding.models import EvidenceSet, GroundingLink
from policies import governance
from policies.choices import Role
from policies.models import AuditEvent, DisclosureDecision, IdempotencyKey
from tests import factories
from tests.api.helpers import client_for, problem, register_body
from tests.conftest import requires_postgres, wait_for_lock_waiters
from tests.evidence.conftest import load

LINKS = "/api/v1/groundings/"


def key(value: str) -> dict[str, str]:
    return {"HTTP_IDEMPOTENCY_KEY": value}


def post(client, path: str, body, value: str, **extra):
    return client.post(path, body, format="json", **key(value), **extra)


def assert_replay_of(first, again) -> None:
    assert again.status_code == first.status_code
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    for header in ("Location", "ETag"):
        assert again.get(header) == first.get(header)
    assert not first.has_header("Idempotent-Replayed")


def test_the_same_key_and_body_answer_the_first_answer_again_and_write_nothing(world):
    client = client_for(world.curator)
    body = register_body(world)
    first = post(client, LINKS, body, "retry-1")
    assert first.status_code == 201
    events = AuditEvent.objects.count()
    # Members in another order are the same body (canonical JSON).
    again = post(client, LINKS, dict(reversed(list(body.items()))), "retry-1")
    assert_replay_of(first, again)
    assert again["ETag"] == '"1"' and again["Location"].endswith(f"{first.json()['grounding_id']}/")
    assert GroundingLink.objects.count() == 1
    assert AuditEvent.objects.count() == events
    stored = IdempotencyKey.objects.get()
    assert (stored.user_id, stored.key, stored.status) == (world.curator.pk, "retry-1", 201)


def test_without_a_key_a_retry_writes_again(world):
    client = client_for(world.curator)
    assert client.post(LINKS, register_body(world), format="json").status_code == 201
    assert client.post(LINKS, register_body(world), format="json").status_code == 201
    assert GroundingLink.objects.count() == 2
    assert IdempotencyKey.objects.count() == 0


def test_the_same_key_with_another_body_is_422_idempotency_key_reuse(world):
    client = client_for(world.curator)
    assert post(client, LINKS, register_body(world), "reused").status_code == 201
    other = register_body(world, owner_ref="urn:team:other")
    body = problem(post(client, LINKS, other, "reused"), 422, "idempotency_key_reuse")
    assert [o["pointer"] for o in body["offenders"]] == ["/headers/Idempotency-Key"]
    assert GroundingLink.objects.count() == 1
    refused = AuditEvent.objects.get(outcome="refused")
    assert (refused.action, refused.code) == ("register", "idempotency_key_reuse")


def test_the_same_key_on_another_endpoint_is_422_idempotency_key_reuse(world):
    client = client_for(world.curator)
    body = register_body(world)
    assert post(client, LINKS, body, "k").status_code == 201
    problem(post(client, f"{LINKS}bulk/", {"items": [body]}, "k"), 422, "idempotency_key_reuse")
    assert GroundingLink.objects.count() == 1


def test_keys_are_the_callers_own(world):
    other = factories.user_with_roles(world.dimension, Role.CURATOR)
    body = register_body(world)
    first = post(client_for(world.curator), LINKS, body, "shared-key")
    second = post(client_for(other), LINKS, body, "shared-key")
    assert first.status_code == second.status_code == 201
    assert not second.has_header("Idempotent-Replayed")
    assert second.json()["grounding_id"] != first.json()["grounding_id"]
    assert GroundingLink.objects.count() == 2
    assert sorted(IdempotencyKey.objects.values_list("user_id", flat=True)) == sorted(
        [world.curator.pk, other.pk]
    )
    # Each caller's retry replays its own answer.
    again = post(client_for(other), LINKS, body, "shared-key")
    assert_replay_of(second, again)


@pytest.mark.parametrize(
    "value",
    ["", "k" * 256, "ключ", "tab\there", "nul\x00", "del\x7f", "line\nbreak", "é"],
    ids=["empty", "256-chars", "cyrillic", "tab", "nul", "del", "newline", "latin-1"],
)
def test_a_key_that_is_not_1_to_255_printable_ascii_is_400_invalid_idempotency_key(world, value):
    response = post(client_for(world.curator), LINKS, register_body(world), value)
    body = problem(response, 400, "invalid_idempotency_key")
    assert body["offenders"][0]["pointer"] == "/headers/Idempotency-Key"
    assert value not in response.content.decode() or value == ""
    assert GroundingLink.objects.count() == 0
    assert IdempotencyKey.objects.count() == 0
    refused = AuditEvent.objects.get(outcome="refused")
    assert (refused.action, refused.code) == ("register", "invalid_idempotency_key")


def test_a_key_of_255_printable_ascii_characters_is_taken(world):
    value = ("a ~!" * 64)[:255]
    response = post(client_for(world.curator), LINKS, register_body(world), value)
    assert response.status_code == 201
    assert IdempotencyKey.objects.get().key == value


def test_a_refused_write_stores_no_key_so_its_retry_runs_again(world):
    body = register_body(world)
    refused = post(client_for(world.reviewer), LINKS, body, "after-grant")
    problem(refused, 403, "role_required")
    assert IdempotencyKey.objects.count() == 0
    governance.grant_role(
        actor=None, dimension=world.dimension, user=world.reviewer, role=Role.CURATOR
    )
    retried = post(client_for(world.reviewer), LINKS, body, "after-grant")
    assert retried.status_code == 201
    assert not retried.has_header("Idempotent-Replayed")
    assert GroundingLink.objects.count() == 1


def test_keys_are_kept_for_the_configured_hours_and_an_expired_one_is_a_new_key(world, settings):
    settings.GROUNDING_IDEMPOTENCY_TTL_HOURS = 3
    client = client_for(world.curator)
    body = register_body(world)
    first = post(client, LINKS, body, "ttl")
    stored = IdempotencyKey.objects.get()
    assert stored.expires_at - stored.created_at == timedelta(hours=3)
    IdempotencyKey.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    again = post(client, LINKS, body, "ttl")
    assert again.status_code == 201 and not again.has_header("Idempotent-Replayed")
    assert again.json()["grounding_id"] != first.json()["grounding_id"]
    # The expired row was replaced by the new answer.
    assert IdempotencyKey.objects.get().body.count(again.json()["grounding_id"]) >= 1


def test_sweep_idempotency_keys_deletes_the_expired_keys_only(world):
    client = client_for(world.curator)
    post(client, LINKS, register_body(world), "old")
    post(client, LINKS, register_body(world), "fresh")
    IdempotencyKey.objects.filter(key="old").update(expires_at=timezone.now())
    out = io.StringIO()
    call_command("sweep_idempotency_keys", stdout=out)
    assert out.getvalue().strip() == "Deleted 1 expired idempotency key(s)."
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["fresh"]


def test_a_patch_retry_replays_its_200_and_etag_instead_of_a_412(world, link):
    client = client_for(world.curator)
    change = {"owner_ref": "urn:team:x", "revision_reason": "handover"}
    path = f"{LINKS}{link.pk}/"
    first = client.patch(path, change, format="json", HTTP_IF_MATCH='"1"', **key("p"))
    assert first.status_code == 200 and first["ETag"] == '"2"'
    again = client.patch(path, change, format="json", HTTP_IF_MATCH='"1"', **key("p"))
    assert_replay_of(first, again)
    link.refresh_from_db()
    assert link.revision == 2


def test_a_bulk_retry_replays_every_item_and_writes_none(world):
    client = client_for(world.curator)
    items = {"items": [register_body(world), register_body(world, external=True)]}
    first = post(client, f"{LINKS}bulk/", items, "bulk")
    assert first.status_code == 201
    assert_replay_of(first, post(client, f"{LINKS}bulk/", items, "bulk"))
    assert GroundingLink.objects.count() == 2


def test_an_assessment_retry_replays_the_record(world, link):
    client = client_for(world.reviewer)
    body = factories.assessment_body(1)
    path = f"{LINKS}{link.pk}/assessments/"
    first = client.post(path, body, format="json", HTTP_IF_MATCH='"1"', **key("a"))
    assert first.status_code == 201
    again = client.post(path, body, format="json", HTTP_IF_MATCH='"1"', **key("a"))
    assert_replay_of(first, again)
    assert link.assessments.count() == 1


def test_an_evidence_set_retry_replays_its_location_and_etag(world):
    client = client_for(world.curator)
    body = {"dimension": world.dimension.name, "evidence_set_ref": "urn:set:retry"}
    first = post(client, "/api/v1/evidence-sets/", body, "set")
    assert first.status_code == 201 and "dimension=" in first["Location"]
    assert_replay_of(first, post(client, "/api/v1/evidence-sets/", body, "set"))
    assert EvidenceSet.objects.count() == 1


def test_a_wsp_import_retry_replays_the_201_where_the_execution_id_alone_answers_200(world):
    client = client_for(world.curator)
    path = f"/api/v1/evidence/wsp-imports/?dimension={world.dimension.name}"
    document = load("search")
    first = post(client, path, document, "wsp")
    assert first.status_code == 201
    assert_replay_of(first, post(client, path, document, "wsp"))
    # Without the key, the execution id's own idempotency stands: 200, the same report.
    plain = client.post(path, document, format="json")
    assert plain.status_code == 200 and plain.json() == first.json()
    assert RetrievalObservation.objects.count() == 1


def test_a_disclosure_decision_retry_and_its_revocation_retry_replay(world):
    client = client_for(world.access_steward)
    body = {
        "dimension": world.dimension.name,
        "decision_ref": "urn:access:retry",
        "recipient_scope": "partner:acme",
        "purpose": "citation-display",
        "fields": ["statement", "support"],
    }
    first = post(client, "/api/v1/disclosure-decisions/", body, "d")
    assert first.status_code == 201, first.content[:300]
    assert_replay_of(first, post(client, "/api/v1/disclosure-decisions/", body, "d"))
    assert DisclosureDecision.objects.filter(decision_ref="urn:access:retry").count() == 1
    path = f"/api/v1/disclosure-decisions/{first.json()['id']}/?reason=done"
    gone = client.delete(path, **key("r"))
    assert gone.status_code == 204
    again = client.delete(path, **key("r"))
    assert again.status_code == 204 and again["Idempotent-Replayed"] == "true"


def test_every_write_operation_declares_the_key_and_its_refusals(db, client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    schema = json.loads(response.content)
    writes = [
        (path, method, operation)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if method in ("post", "patch", "delete")
    ]
    assert len(writes) >= 18
    for path, method, operation in writes:
        header = next(p for p in operation["parameters"] if p["name"] == "Idempotency-Key")
        assert header["in"] == "header" and not header.get("required"), (path, method)
        assert header["schema"]["maxLength"] == 255 and header["schema"]["minLength"] == 1
        assert {"400", "409", "422"} <= set(operation["responses"]), (path, method)
        for status, response in operation["responses"].items():
            replayed = "Idempotent-Replayed" in response.get("headers", {})
            assert replayed == status.startswith("2"), (path, method, status)


# -- PostgreSQL: the advisory lock of a key still running


@requires_postgres
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_key_whose_first_request_is_still_running_is_409_idempotency_in_progress(
    world, live_server
):
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    token = factories.token_for(world.curator)
    endpoint = f"{live_server.url}{LINKS}{link.pk}/"
    headers = {"Authorization": f"Token {token}", "If-Match": '"1"', "Idempotency-Key": "busy"}
    change = {"owner_ref": "urn:team:x", "revision_reason": "handover"}
    first: list[requests.Response] = []
    holder = connections.create_connection("default")
    try:
        holder.set_autocommit(False)
        with holder.cursor() as cursor:
            # The first PATCH waits on this row lock, inside its transaction.
            cursor.execute(
                "SELECT 1 FROM grounding_groundinglink WHERE grounding_id = %s FOR UPDATE",
                [link.pk],
            )
        thread = threading.Thread(
            target=lambda: first.append(
                requests.patch(endpoint, json=change, headers=headers, timeout=60)
            )
        )
        thread.start()
        wait_for_lock_waiters(1)
        second = requests.patch(endpoint, json=change, headers=headers, timeout=60)
    finally:
        holder.rollback()
        holder.close()
    thread.join(timeout=60)
    assert second.status_code == 409, second.text[:300]
    assert second.json()["code"] == "idempotency_in_progress"
    assert first[0].status_code == 200 and first[0].json()["revision"] == 2
    third = requests.patch(endpoint, json=change, headers=headers, timeout=60)
    assert third.status_code == 200 and third.headers["Idempotent-Replayed"] == "true"
    assert third.json() == first[0].json()
    link.refresh_from_db()
    assert link.revision == 2
    refused = AuditEvent.objects.get(outcome="refused")
    assert (refused.action, refused.code) == ("revise", "idempotency_in_progress")


def test_a_disposal_purges_the_stored_answer_and_a_retry_registers_nothing(world):
    """A stored first answer copies the link's texts (its selector quote); a disposal
    purges it with them, and the key stays used: a retry must not register the
    disposed link again. It is answered 410 answer_disposed, a problem every write
    declares (it was the first status with an undeclared body)."""
    client = client_for(world.curator)
    body = register_body(world)
    quote = body["anchor"]["source_selector"]["exact"]
    first = post(client, LINKS, body, "dispose-me")
    assert first.status_code == 201 and quote in first.content.decode()
    grounding_id = first.json()["grounding_id"]
    disposed = client_for(world.access_steward).post(
        f"{LINKS}{grounding_id}/disposal/",
        {"receipt_ref": "urn:receipt:idem", "policy_ref": "urn:policy:ret@1"},
        format="json",
        HTTP_IF_MATCH='"1"',
    )
    assert disposed.status_code in (200, 201), disposed.content[:300]
    stored = IdempotencyKey.objects.get(key="dispose-me")
    assert quote not in stored.body
    assert (stored.status, stored.headers) == (410, {})
    again = post(client, LINKS, body, "dispose-me")
    assert again["Idempotent-Replayed"] == "true"
    assert "Location" not in again
    replayed = problem(again, 410, "answer_disposed")
    assert replayed["disposed"] == grounding_id
    assert quote not in again.content.decode()
    assert GroundingLink.objects.count() == 1


def test_a_stored_answer_purged_before_answer_disposed_existed_becomes_it(world):
    """policies migration 0009: a row a disposal purged earlier (the first status, a
    `{detail, disposed}` body) replays as the 410 answer_disposed problem."""
    from importlib import import_module

    from django.apps import apps

    legacy = json.dumps(
        {
            "detail": "the first answer to this key named a link since disposed; "
            "its copied text is purged.",
            "disposed": "01a236ce-3c88-76f6-89df-3238fc36e21a",
        }
    )
    now = timezone.now()
    row = IdempotencyKey.objects.create(
        user=world.curator, key="legacy", fingerprint="f" * 64, status=201, body=legacy,
        headers={"Location": "/x/"}, created_at=now, expires_at=now + timedelta(hours=1),
    )  # fmt: skip
    import_module("policies.migrations.0009_idempotency_answer_disposed").to_answer_disposed(
        apps, None
    )
    row.refresh_from_db()
    assert (row.status, row.headers) == (410, {})
    body = json.loads(row.body)
    assert (body["code"], body["status"], body["disposed"]) == (
        "answer_disposed",
        410,
        "01a236ce-3c88-76f6-89df-3238fc36e21a",
    )
