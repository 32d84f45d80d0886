"""policies.memberships: a user's roles fetched once per request, in one place, and a
grant or revocation seen at the next request (over the real test clients)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from policies import governance
from policies.choices import Role
from policies.memberships import NONE, forget_memberships, memberships
from policies.services import require_role, roles_of
from tests import factories
from tests.api.helpers import client_for, if_match, problem

pytestmark = pytest.mark.django_db


def _fresh(user):
    """Another object for the same user, as another request's authentication loads."""
    return get_user_model().objects.get(pk=user.pk)


def _revoke(dimension, user, role: Role) -> None:
    # Through another user object: nothing the request's own object holds is forgotten.
    assert governance.revoke_role(actor=None, dimension=dimension, user=_fresh(user), role=role)


def _grant(dimension, user, role: Role) -> None:
    governance.grant_role(actor=None, dimension=dimension, user=_fresh(user), role=role)


def test_memberships_are_fetched_in_one_query_and_kept_on_the_user_object():
    first, second = factories.make_dimension("memb-a"), factories.make_dimension("memb-b")
    user = factories.user_with_roles(first, Role.CURATOR, Role.REVIEWER)
    governance.grant_role(actor=None, dimension=second, user=user, role=Role.STEWARD)
    user = _fresh(user)

    with CaptureQueriesContext(connection) as queries:
        held = memberships(user)
        assert memberships(user) is held
        assert roles_of(user, first) == {"curator", "reviewer"}
        assert roles_of(user, second) == {"steward"}
        require_role(user, first, Role.REVIEWER)
    assert len(queries) == 1

    assert held.of(first.pk) == frozenset({"curator", "reviewer"})
    assert held.of(None) == frozenset()
    assert [d.name for d in held.holding()] == ["memb-a", "memb-b"]
    assert [d.name for d in held.holding(Role.STEWARD)] == ["memb-b"]
    assert held.holding(Role.ACCESS_STEWARD) == []


def test_the_one_statement_holds_what_the_membership_queryset_selects():
    from policies.models import DimensionMembership

    dimensions = [factories.make_dimension(f"memb-q{i}") for i in range(3)]
    user = factories.user_with_roles(dimensions[0], Role.CURATOR, Role.REVIEWER)
    governance.grant_role(actor=None, dimension=dimensions[2], user=user, role=Role.STEWARD)
    other = factories.user_with_roles(dimensions[1], Role.CURATOR)  # not the user's
    held = memberships(_fresh(user))
    rows = DimensionMembership.objects.filter(user_id=user.pk).select_related("dimension")
    expected: dict[int, set[str]] = {}
    for row in rows:
        expected.setdefault(row.dimension_id, set()).add(row.role)
        stored = held.dimensions[row.dimension_id]
        assert [getattr(stored, f.attname) for f in stored._meta.concrete_fields] == [
            getattr(row.dimension, f.attname) for f in stored._meta.concrete_fields
        ]
    assert held.roles == {pk: frozenset(roles) for pk, roles in expected.items()}
    assert set(held.roles) == {dimensions[0].pk, dimensions[2].pk}
    assert memberships(_fresh(other)).roles == {dimensions[1].pk: frozenset({"curator"})}


def test_an_anonymous_or_missing_user_holds_nothing_without_a_query():
    with CaptureQueriesContext(connection) as queries:
        assert memberships(AnonymousUser()) is NONE
        assert memberships(None) is NONE
    assert len(queries) == 0


def test_a_grant_or_revocation_through_the_same_user_object_is_seen_at_once():
    dimension = factories.make_dimension()
    user = factories.user_with_roles(dimension, Role.CURATOR)
    assert roles_of(user, dimension) == {"curator"}

    governance.grant_role(actor=None, dimension=dimension, user=user, role=Role.REVIEWER)
    assert roles_of(user, dimension) == {"curator", "reviewer"}

    governance.revoke_role(actor=None, dimension=dimension, user=user, role=Role.CURATOR)
    assert roles_of(user, dimension) == {"reviewer"}


def test_forget_memberships_makes_the_next_call_fetch_again():
    dimension = factories.make_dimension()
    user = factories.user_with_roles(dimension, Role.CURATOR)
    assert roles_of(user, dimension) == {"curator"}
    _grant(dimension, user, Role.REVIEWER)
    assert roles_of(user, dimension) == {"curator"}  # kept: this object's request

    forget_memberships(user)

    assert roles_of(user, dimension) == {"curator", "reviewer"}


def test_a_revoked_role_reads_not_found_at_the_next_api_request(world, link):
    client = client_for(world.reviewer)
    url = f"/api/v1/groundings/{link.grounding_id}/"
    assert client.get(url).status_code == 200

    _revoke(world.dimension, world.reviewer, Role.REVIEWER)

    problem(client.get(url), 404, "not_found")


def test_a_revoked_role_is_refused_by_require_role_at_the_next_api_request(world, link):
    user = factories.user_with_roles(world.dimension, Role.CURATOR, Role.REVIEWER)
    client = client_for(user)
    url = f"/api/v1/groundings/{link.grounding_id}/assessments/"
    first = client.post(url, factories.assessment_body(1), format="json", **if_match(1))
    assert first.status_code == 201, first.content[:300]

    _revoke(world.dimension, user, Role.REVIEWER)

    second = client.post(url, factories.assessment_body(1), format="json", **if_match(1))
    problem(second, 403, "role_required")


def test_a_granted_role_is_seen_at_the_next_api_request(world, link):
    client = client_for(world.outsider)
    url = f"/api/v1/groundings/{link.grounding_id}/"
    problem(client.get(url), 404, "not_found")

    _grant(world.dimension, world.outsider, Role.REVIEWER)

    response = client.get(url)
    assert response.status_code == 200
    assert response.json()["grounding_id"] == str(link.grounding_id)


@pytest.mark.urls("tests.ui.urls")
def test_a_revoked_role_is_refused_at_the_next_admin_request(client, world, link):
    for user in (world.curator, world.steward):
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    link_page = reverse("admin:grounding_groundinglink_change", args=[link.pk])
    dimensions_page = reverse("admin:policies_dimension_changelist")

    client.force_login(world.curator)
    assert client.get(link_page).status_code == 200
    _revoke(world.dimension, world.curator, Role.CURATOR)
    assert client.get(link_page).status_code == 404

    client.force_login(world.steward)
    page = client.get(dimensions_page)
    assert page.status_code == 200 and world.dimension.name in page.content.decode()
    _revoke(world.dimension, world.steward, Role.STEWARD)
    assert client.get(dimensions_page).status_code == 403
