"""Webhook subscriptions over the API (API.md "Event feed"): stewards only, the secret
once, refused URLs as 400 problems with offenders, tenancy, attempts and replays."""

from __future__ import annotations

import uuid

import pytest

from feed import worker
from feed.models import Delivery, DeliveryAttempt, Webhook
from policies.models import AuditEvent
from tests import factories
from tests.api.helpers import client_for, pointers, problem
from tests.feed.receiver import Answer, Receiver

WEBHOOKS = "/api/v1/webhooks/"


def _create(world, url: str, user=None, **extra):
    body = {"dimension": world.dimension.name, "url": url, **extra}
    return client_for(user or world.steward).post(WEBHOOKS, body, format="json")


def test_a_steward_subscribes_and_sees_the_secret_once(world):
    response = _create(world, "http://127.0.0.1:9/hook", description="display cache")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["secret"].startswith("whsec_")
    assert body["dimension"] == world.dimension.name
    assert body["active"] is True and body["event_types"] == []
    listed = client_for(world.steward).get(WEBHOOKS).json()
    assert [w["webhook_id"] for w in listed] == [body["webhook_id"]]
    assert "secret" not in listed[0]
    read = client_for(world.steward).get(f"{WEBHOOKS}{body['webhook_id']}/").json()
    assert "secret" not in read
    history = Webhook.history.filter(webhook_id=body["webhook_id"]).values()
    assert all("secret" not in row for row in history)
    assert AuditEvent.objects.filter(action="create_webhook", outcome="applied").count() == 1


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("http://example.org/hook", "https_required"),
        ("https://127.0.0.1/hook", "refused_address"),
        ("https://10.1.2.3/hook", "refused_address"),
        ("https://169.254.169.254/latest/meta-data/", "refused_address"),
        ("https://[::1]/hook", "refused_address"),
        ("https://[::ffff:192.168.0.1]/hook", "refused_address"),
        ("https://[fe80::1]/hook", "refused_address"),
        ("https://100.64.0.1/hook", "refused_address"),
        ("https://localhost/hook", "refused_address"),
        ("https://user:pw@example.org/hook", "credentials_in_url"),
        ("ftp://example.org/hook", "https_required"),
        ("https:///nohost", "invalid"),
        ("https://no-such-host.invalid/hook", "unresolvable"),
    ],
)
def test_refused_urls_are_400_problems_naming_the_url(world, settings, url, code):
    settings.GROUNDING_WEBHOOK_ALLOW_PRIVATE = False
    body = problem(_create(world, url), 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [("/url", code)]
    assert Webhook.objects.count() == 0
    refused = AuditEvent.objects.get(action="create_webhook")
    assert (refused.outcome, refused.code) == ("refused", "validation_error")


def test_metadata_and_link_local_stay_refused_when_private_receivers_are_allowed(world):
    body = problem(_create(world, "http://169.254.169.254/"), 400, "validation_error")
    assert pointers(body) == ["/url"]


def test_an_overlong_url_is_a_400_problem(world):
    body = problem(_create(world, "https://example.org/" + "a" * 3000), 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [("/url", "max_length")]


def test_unknown_event_types_are_refused(world):
    body = problem(
        _create(world, "http://127.0.0.1:9/", event_types=["org.grounding.link.eaten"]),
        400,
        "validation_error",
    )
    assert pointers(body) == ["/event_types/0"]


def test_only_stewards_subscribe_and_strangers_learn_nothing(world):
    problem(_create(world, "http://127.0.0.1:9/", user=world.curator), 403, "role_required")
    body = problem(_create(world, "http://127.0.0.1:9/", user=world.outsider), 400,
                   "validation_error")  # fmt: skip
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [
        ("/dimension", "unknown_reference")
    ]


def test_another_dimensions_webhook_answers_as_an_unknown_one(world):
    other = factories.make_dimension()
    other_steward = factories.user_with_roles(other, "steward")
    theirs = client_for(other_steward).post(
        WEBHOOKS, {"dimension": other.name, "url": "http://127.0.0.1:9/"}, format="json"
    )
    assert theirs.status_code == 201
    foreign = theirs.json()["webhook_id"]
    client = client_for(world.steward)
    for suffix in ("", "deliveries/"):
        a = client.get(f"{WEBHOOKS}{foreign}/{suffix}")
        b = client.get(f"{WEBHOOKS}{uuid.uuid4()}/{suffix}")
        assert problem(a, 404, "not_found") == problem(b, 404, "not_found")
    problem(client.delete(f"{WEBHOOKS}{foreign}/"), 404, "not_found")
    assert Webhook.objects.filter(pk=foreign).exists()


def test_attempts_are_listed_and_one_is_replayed_with_the_same_webhook_id(world, settings):
    settings.GROUNDING_WEBHOOK_RETRY_SCHEDULE = []
    with Receiver(lambda n, r: Answer(500 if n == 0 else 200)) as receiver:
        created = _create(world, receiver.url).json()
        factories.register_link(world.curator, world.dimension, world.profile, world.passage)
        worker.deliver_until_idle()
        assert Delivery.objects.get().state == "failed"  # no retries left
        client = client_for(world.steward)
        listed = client.get(f"{WEBHOOKS}{created['webhook_id']}/deliveries/").json()
        assert [(a["n"], a["outcome"], a["status_code"], a["delivery_state"])
                for a in listed["results"]] == [(1, "status", 500, "failed")]  # fmt: skip
        assert listed["results"][0]["type"] == "org.grounding.link.registered"
        replay = client.post(f"{WEBHOOKS}{created['webhook_id']}/deliveries/1/retry/")
        assert replay.status_code == 202, replay.content
        assert replay.json()["delivery_state"] == "pending"
        worker.deliver_until_idle()
    assert Delivery.objects.get().state == "delivered"
    assert [r.headers["webhook-id"] for r in receiver.received] == [
        listed["results"][0]["event_id"]
    ] * 2
    numbers = list(DeliveryAttempt.objects.order_by("n").values_list("n", "outcome"))
    assert numbers == [(1, "status"), (2, "delivered")]
    problem(client.post(f"{WEBHOOKS}{created['webhook_id']}/deliveries/9/retry/"), 404,
            "not_found")  # fmt: skip


def test_a_disabled_webhook_is_turned_on_again_and_gets_what_waited(world):
    with Receiver(lambda n, r: Answer(410 if n == 0 else 200)) as receiver:
        created = _create(world, receiver.url).json()
        for _ in range(2):
            factories.register_link(world.curator, world.dimension, world.profile,
                                    world.passage)  # fmt: skip
        worker.deliver_until_idle()
        client = client_for(world.steward)
        read = client.get(f"{WEBHOOKS}{created['webhook_id']}/").json()
        assert read["active"] is False
        problem(client.post(f"{WEBHOOKS}{created['webhook_id']}/deliveries/1/retry/"), 409,
                "webhook_inactive")  # fmt: skip
        on = client.patch(f"{WEBHOOKS}{created['webhook_id']}/", {"active": True}, format="json")
        assert on.status_code == 200 and on.json()["active"] is True
        worker.deliver_until_idle()
    assert len(receiver.received) == 2
    assert sorted(Delivery.objects.values_list("state", flat=True)) == ["delivered", "failed"]


def test_a_deleted_webhook_is_gone_and_owed_nothing_more(world):
    created = _create(world, "http://127.0.0.1:9/").json()
    factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    client = client_for(world.steward)
    response = client.delete(f"{WEBHOOKS}{created['webhook_id']}/")
    assert response.status_code == 204
    problem(client.get(f"{WEBHOOKS}{created['webhook_id']}/"), 404, "not_found")
    assert client.get(WEBHOOKS).json() == []
    factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    assert worker.deliver_until_idle() == 0
    # The delivery workers write a subscription's deliveries: a deleted one's, never.
    assert Delivery.objects.count() == 0
    assert Webhook.history.filter(webhook_id=created["webhook_id"]).count() == 2
