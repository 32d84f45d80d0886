"""From an empty database to a first client with management commands only:
create_dimension, grant_role / revoke_role, issue_token / list_tokens / revoke_token."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.test import APIClient

from policies.models import AuditEvent, Dimension, DimensionMembership, DisclosureDecision
from tests import factories

pytestmark = pytest.mark.django_db

REFS = [
    "--namespace=urn:grounding:acme",
    "--policy-package-ref=urn:policy:acme:package@1",
    "--disposition-policy-ref=urn:policy:acme:retention@1",
    "--disclosure-policy-ref=urn:policy:acme:disclosure@1",
    "--safety-policy-ref=urn:policy:acme:untrusted-content@1",
    "--owner-ref=role:grounding-curator",
]


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def get(key: str | None, path: str = "/api/v1/groundings/"):
    client = APIClient()
    if key is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get(path)


def test_create_dimension_records_the_internal_decisions_and_its_steward():
    factories.UserFactory(username="ops")
    result = json.loads(run("create_dimension", "acme", *REFS, "--steward=ops", "--json"))

    assert result == {
        "dimension": "acme",
        "decisions": [
            "urn:access:internal:access_steward",
            "urn:access:internal:curator",
            "urn:access:internal:reviewer",
            "urn:access:internal:steward",
        ],
    }
    decisions = DisclosureDecision.objects.filter(dimension__name="acme", internal=True)
    assert sorted(decisions.values_list("recipient_scope", "purpose")) == [
        ("role:access_steward", "stewardship"),
        ("role:curator", "curation"),
        ("role:reviewer", "review"),
        ("role:steward", "stewardship"),
    ]
    assert list(
        DimensionMembership.objects.filter(dimension__name="acme").values_list(
            "user__username", "role"
        )
    ) == [("ops", "steward")]
    assert list(
        AuditEvent.objects.filter(dimension_ref="acme")
        .order_by("occurred_at", "event_id")
        .values_list("action", flat=True)
    ) == ["create_dimension", "grant_role"]


def test_create_dimension_derives_the_references_it_is_not_given_from_the_name():
    run("create_dimension", "acme", "--owner-ref=role:acme-ops")

    dimension = Dimension.objects.get(name="acme")
    assert (
        dimension.namespace,
        dimension.policy_package_ref,
        dimension.disposition_policy_ref,
        dimension.disclosure_policy_ref,
        dimension.safety_policy_ref,
        dimension.owner_ref,
    ) == (
        "urn:grounding:acme",
        "urn:policy:acme:package@1",
        "urn:policy:acme:retention@1",
        "urn:policy:acme:disclosure@1",
        "urn:policy:acme:untrusted-content@1",
        "role:acme-ops",
    )
    assert dimension.disclosure_decisions.filter(internal=True).count() == 4


def test_create_dimension_refuses_a_duplicate_an_invalid_name_and_an_unknown_steward():
    run("create_dimension", "acme", *REFS)
    with pytest.raises(CommandError, match="exists already"):
        run("create_dimension", "acme", *REFS)
    with pytest.raises(CommandError, match="not a valid Dimension: name"):
        run("create_dimension", "Not A Slug", *REFS)
    with pytest.raises(CommandError, match="no user 'nobody'"):
        run("create_dimension", "other", *REFS, "--steward=nobody")
    assert list(get_user_model().objects.values_list("username", flat=True)) == []
    assert DisclosureDecision.objects.filter(dimension__name="other").count() == 0


def test_grant_and_revoke_roles_keep_the_history():
    run("create_dimension", "acme", *REFS)
    assert run("grant_role", "bot", "curator", "--dimension=acme", "--create-user") == (
        "bot is curator in acme.\n"
    )
    bot = get_user_model().objects.get(username="bot")
    assert not bot.has_usable_password()
    run("grant_role", "bot", "curator", "--dimension=acme")  # idempotent
    assert DimensionMembership.objects.filter(user=bot).count() == 1

    assert run("revoke_role", "bot", "curator", "--dimension=acme") == (
        "bot is no longer curator in acme.\n"
    )
    assert DimensionMembership.objects.filter(user=bot).count() == 0
    history = DimensionMembership.history.filter(user_id=bot.pk).order_by("history_date")
    assert [(h.history_type, h.history_change_reason) for h in history] == [
        ("+", "granted curator"),
        ("-", "revoked curator"),
    ]
    with pytest.raises(CommandError, match="bot is not curator in acme"):
        run("revoke_role", "bot", "curator", "--dimension=acme")
    with pytest.raises(CommandError, match="no Dimension 'nope'"):
        run("grant_role", "bot", "curator", "--dimension=nope")


def test_an_issued_token_authenticates_is_stored_hashed_and_expires_in_90_days():
    run("create_dimension", "acme", *REFS)
    run("grant_role", "bot", "curator", "--dimension=acme", "--create-user")

    issued = json.loads(run("issue_token", "bot", "--json"))

    key = issued["key"]
    assert len(key) == 64 and issued["token_key"] == key[:15]
    stored = AuthToken.objects.get()
    assert stored.digest != key and key not in stored.digest
    assert stored.token_key == key[:15]
    lifetime = stored.expiry - timezone.now()
    assert timedelta(days=89, hours=23) < lifetime <= timedelta(days=90)
    response = get(key)
    assert response.status_code == 200, response.content
    assert response.json()["results"] == []
    assert get(key[:-1] + ("0" if key[-1] != "0" else "1")).status_code == 401


def test_list_tokens_names_tokens_by_prefix_and_revoke_token_stops_them():
    bot = factories.UserFactory(username="bot")
    other = factories.UserFactory(username="other")
    first = run("issue_token", "bot", "--quiet").strip()
    second = json.loads(run("issue_token", "bot", "--days=7", "--json"))
    factories.token_for(other)

    listed = json.loads(run("list_tokens", "--user=bot", "--json"))
    assert [row["token_key"] for row in listed] == [second["token_key"], first[:15]]
    assert {row["user"] for row in listed} == {"bot"}
    assert [row["expired"] for row in listed] == [False, False]
    table = run("list_tokens")
    assert first[:15] in table and first not in table and second["key"] not in table

    assert run("revoke_token", first[:15]) == f"Revoked {first[:15]} of bot.\n"
    assert get(first).status_code == 401
    assert get(second["key"]).status_code == 200
    assert run("revoke_token", "--user=bot") == "Revoked 1 token(s) of bot.\n"
    assert get(second["key"]).status_code == 401
    assert AuthToken.objects.filter(user=bot).count() == 0
    assert AuthToken.objects.filter(user=other).count() == 1
    actions = AuditEvent.objects.filter(action__in=["issue_token", "revoke_token"])
    assert sorted(actions.values_list("action", flat=True)) == [
        "issue_token",
        "issue_token",
        "issue_token",
        "revoke_token",
        "revoke_token",
    ]
    with pytest.raises(CommandError, match="not_found"):
        run("revoke_token", first[:15])


def test_an_expired_token_is_refused_listed_as_expired_and_revocable():
    bot = factories.UserFactory(username="bot")
    key = factories.token_for(bot)
    token = AuthToken.objects.get(user=bot)
    AuthToken.objects.filter(pk=token.pk).update(expiry=timezone.now() - timedelta(seconds=1))

    response = get(key)
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
    assert [row["expired"] for row in json.loads(run("list_tokens", "--json"))] == [True]
    assert run("revoke_token", "--user=bot", "--expired") == "Revoked 1 token(s) of bot.\n"


def test_token_lifetimes_are_bounded():
    factories.UserFactory(username="bot")
    with pytest.raises(CommandError, match="validation_error"):
        run("issue_token", "bot", "--days=0")
    with pytest.raises(CommandError, match="validation_error"):
        run("issue_token", "bot", "--days=3651")
    assert AuthToken.objects.count() == 0


@pytest.mark.parametrize(
    "header",
    [
        b"Token \xff\xfe",
        b"Token abc\x00def",
        b"Token " + b"g" * 64,
        b"Token " + b"a" * 65,
        b"Token",
        b"Token a b",
    ],
    ids=["not-utf8", "nul", "not-hex", "too-long", "no-key", "spaces"],
)
def test_malformed_keys_are_401_problems_never_500(header):
    client = APIClient()
    response = client.get("/api/v1/groundings/", HTTP_AUTHORIZATION=header.decode("latin-1"))
    assert response.status_code == 401, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Token"


def test_the_admin_lists_tokens_by_prefix_read_only(client):
    ops = get_user_model().objects.create_superuser("ops", "ops@example.org", "pw-for-tests")
    key = factories.token_for(ops)
    client.force_login(ops)

    page = client.get("/admin/knox/authtoken/")
    assert page.status_code == 200
    html = page.content.decode()
    assert key[:15] in html
    # The digest is the row's primary key (in its links); the key is nowhere.
    assert key not in html
    assert client.get("/admin/knox/authtoken/add/").status_code == 403
