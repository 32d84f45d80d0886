"""Actor and reviewer identities leave the registry (exports, projections) only as
opaque refs, and only where the decision covers `assessments.reviewer` (API.md
"Tenancy")."""

from __future__ import annotations

import json

import pytest

from grounding import services
from grounding.exports.canonical import agent_iri
from tests import factories
from tests.grounding import export_helpers as h

FORMATS = ["native", "web-annotation", "prov-o"]


def _withdrawn(world):
    """A link registered by the curator, assessed by the reviewer and withdrawn by
    the access steward: three accounts acted on it."""
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    link = h.assess(world, link)
    services.withdraw(
        actor=world.access_steward,
        grounding_id=link.pk,
        expected_revision=link.revision,
        withdrawal={"reason": "retracted", "authority_ref": "urn:policy:withdraw@1"},
    )
    link.refresh_from_db()
    return link


def _actors(world):
    return (world.curator, world.reviewer, world.access_steward)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("reviewers", [True, False])
def test_no_export_names_an_account(world, fmt, reviewers):
    link = _withdrawn(world)
    fields = h.ALL_FIELDS if reviewers else [f for f in h.ALL_FIELDS if f != "assessments.reviewer"]
    h.decide(world, fields)
    text = json.dumps(h.project(world, link, fmt))
    for user in _actors(world):
        assert user.username not in text, (fmt, user.username)
        assert f"user:{user.username}" not in text


@pytest.mark.parametrize("reviewers", [True, False])
def test_prov_names_accounts_by_opaque_refs_only_where_reviewers_are_disclosed(world, reviewers):
    link = _withdrawn(world)
    fields = h.ALL_FIELDS if reviewers else [f for f in h.ALL_FIELDS if f != "assessments.reviewer"]
    h.decide(world, fields)
    turtle = h.project(world, link, "prov-o")["turtle"]
    refs = [agent_iri(world.dimension.name, user.pk) for user in _actors(world)]
    assert [ref in turtle for ref in refs] == [reviewers] * 3


def test_an_accounts_opaque_ref_differs_between_dimensions(world):
    other = factories.make_dimension()
    assert agent_iri(world.dimension.name, world.curator.pk) != agent_iri(
        other.name, world.curator.pk
    )
    assert agent_iri(world.dimension.name, world.curator.pk) == agent_iri(
        world.dimension.name, world.curator.pk
    )
