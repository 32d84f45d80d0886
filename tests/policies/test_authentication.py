"""policies.authentication: the token is found by its digest, with its user, in one
plain statement equal to the queryset it replaces; a revoked, expired or deactivated
token is refused at the very next request (real test client, real database)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from knox.crypto import hash_token
from knox.models import AuthToken

from policies import tokens
from policies.authentication import _token_with_user
from policies.choices import Role
from tests import factories
from tests.api.helpers import client_for

pytestmark = pytest.mark.django_db


def _client(key: str):
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_the_statement_finds_what_the_queryset_finds():
    dimension = factories.make_dimension()
    user = factories.user_with_roles(dimension, Role.CURATOR)
    other = factories.user_with_roles(dimension, Role.REVIEWER)
    key = tokens.issue_token(actor=None, user=user).key
    tokens.issue_token(actor=None, user=other)
    expected = AuthToken.objects.select_related("user").filter(digest=hash_token(key)).first()
    with CaptureQueriesContext(connection) as queries:
        found = _token_with_user(hash_token(key))
        assert found.user.username == user.username  # the user came with it
    assert len(queries) == 1
    fields = AuthToken._meta.concrete_fields
    assert [getattr(found, f.attname) for f in fields] == [
        getattr(expected, f.attname) for f in fields
    ]
    user_fields = type(user)._meta.concrete_fields
    assert [getattr(found.user, f.attname) for f in user_fields] == [
        getattr(expected.user, f.attname) for f in user_fields
    ]
    assert not found._state.adding and found._state.db == "default"
    assert _token_with_user(hash_token("0" * len(key))) is None


def test_a_revoked_token_is_refused_at_the_next_request():
    dimension = factories.make_dimension()
    user = factories.user_with_roles(dimension, Role.CURATOR)
    issued = tokens.issue_token(actor=None, user=user)
    client = _client(issued.key)
    assert client.get("/api/v1/groundings/").status_code == 200
    tokens.revoke_token(actor=None, token_key=issued.token.token_key)
    refused = client.get("/api/v1/groundings/")
    assert refused.status_code == 401
    assert refused["Content-Type"] == "application/problem+json"


def test_an_expired_token_and_an_inactive_user_are_refused():
    dimension = factories.make_dimension()
    user = factories.user_with_roles(dimension, Role.CURATOR)
    issued = tokens.issue_token(actor=None, user=user)
    AuthToken.objects.filter(digest=issued.token.digest).update(
        expiry=timezone.now() - timedelta(seconds=1)
    )
    expired = _client(issued.key).get("/api/v1/groundings/")
    assert expired.status_code == 401
    assert expired.json()["code"] == "not_authenticated"
    fresh = client_for(user)
    assert fresh.get("/api/v1/groundings/").status_code == 200
    type(user).objects.filter(pk=user.pk).update(is_active=False)
    assert fresh.get("/api/v1/groundings/").status_code == 401


def test_the_statement_brings_the_memberships_a_fresh_lookup_finds():
    from policies import governance
    from policies.memberships import memberships

    first, second = factories.make_dimension("auth-a"), factories.make_dimension("auth-b")
    user = factories.user_with_roles(first, Role.CURATOR, Role.REVIEWER)
    governance.grant_role(actor=None, dimension=second, user=user, role=Role.STEWARD)
    key = tokens.issue_token(actor=None, user=user).key
    with CaptureQueriesContext(connection) as queries:
        held = memberships(_token_with_user(hash_token(key)).user)
    assert len(queries) == 1  # the roles came with the token
    fresh = memberships(type(user).objects.get(pk=user.pk))
    assert (
        held.roles
        == fresh.roles
        == {
            first.pk: frozenset({"curator", "reviewer"}),
            second.pk: frozenset({"steward"}),
        }
    )
    assert [d.name for d in held.holding()] == ["auth-a", "auth-b"]
    assert held.dimensions[first.pk].disclosure_policy_ref == first.disclosure_policy_ref

    lonely = type(user).objects.create_user("auth-no-roles")
    lonely_key = tokens.issue_token(actor=None, user=lonely).key
    found = _token_with_user(hash_token(lonely_key))
    assert found.user.username == "auth-no-roles"
    assert memberships(found.user).roles == {} and memberships(found.user).holding() == []


def test_a_role_revoked_between_requests_is_gone_at_the_next_one():
    from policies import governance

    dimension = factories.make_dimension("auth-revoke")
    profile = factories.make_profile(version="7.0.0")
    user = factories.user_with_roles(dimension, Role.CURATOR)
    client = _client(tokens.issue_token(actor=None, user=user).key)
    body = factories.link_payload(dimension, profile)
    assert client.post("/api/v1/groundings/", body, format="json").status_code == 201
    assert governance.revoke_role(
        actor=None, dimension=dimension, user=type(user).objects.get(pk=user.pk), role=Role.CURATOR
    )
    refused = client.post("/api/v1/groundings/", body, format="json")
    # A Dimension where the caller holds no role reads as one that does not exist.
    assert refused.status_code == 400, refused.content
    assert [(o["pointer"], o["code"]) for o in refused.json()["offenders"]] == [
        ("/dimension", "unknown_reference")
    ]
