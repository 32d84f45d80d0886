"""List filters select only on values the reader is shown (API.md "Lists",
"The link as read", "Evidence reads").

A disposed link reads as its tombstone, so it matches no filter on a value it no
longer shows; a filter on a disclosable group selects only links where the group
is disclosed to the reader; a passage filter on a locator selects a restricted
source's passage only for a reader whose decision names restricted sources.
"""

from __future__ import annotations

import pytest

from grounding import services
from policies import governance
from policies.choices import Role
from policies.models import DisclosureDecision
from tests import factories
from tests.api.helpers import client_for, register, restrict_curators_to

LIST = "/api/v1/groundings/"
PASSAGES = "/api/v1/evidence/passages/"
DISPOSAL = {"receipt_ref": "urn:storage:receipt:f1", "policy_ref": "urn:policy:ret@1"}


def _ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [item["grounding_id"] for item in response.json()["results"]]


@pytest.fixture
def disposed(world):
    """A link revised onto its own values (so every filter has something to hit),
    then disposed; and a live link with other values."""
    passage = factories.make_passage("A disposed passage about 1932.", dimension=world.dimension)
    statement = {
        **factories.BASE_PAYLOAD["statement"],
        "statement_ref": "urn:answer:hidden#s1",
        "answer_revision_ref": "urn:answer:hidden@1",
    }
    link = factories.register_link(
        world.curator,
        world.dimension,
        world.profile,
        passage,
        statement=statement,
        support={"support_kind": "contextual", "support_scope": {"covers": "year"}},
    )
    services.notify_change(
        actor=world.curator,
        payload={
            "dimension": world.dimension.name,
            "change_ref": "urn:change:hidden-1",
            "kind": "answer",
            "subject_ref": "urn:answer:hidden@1",
            "observed_at": "2026-12-01T09:00:00Z",
            "reason": "answer re-generated",
        },
    )
    services.dispose(
        actor=world.access_steward, grounding_id=link.pk, expected_revision=2, disposal=DISPOSAL
    )
    live = register(world)["grounding_id"]
    return str(link.pk), passage, live


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("statement_ref", "urn:answer:hidden#s1"),
        ("answer_revision_ref", "urn:answer:hidden@1"),
        ("support_kind", "contextual"),
        ("passage_id", None),
        ("recheck_state", "withdrawn"),
        ("display_state", "withdrawn"),
        ("change_ref", "urn:change:hidden-1"),
    ],
)
def test_a_disposed_link_matches_no_filter_on_a_value_its_tombstone_does_not_show(
    world, disposed, name, value
):
    gid, passage, _live = disposed
    value = str(passage.passage_id) if value is None else value
    client = client_for(world.steward)
    # The tombstone is listed, and found by what it still shows ...
    assert gid in _ids(client.get(LIST))
    assert _ids(client.get(LIST, {"record_state": "disposed"})) == [gid]
    assert gid in _ids(client.get(LIST, {"dimension": world.dimension.name}))
    # ... never by what it hid.
    assert _ids(client.get(LIST, {name: value})) == []


def test_a_filter_on_a_group_selects_only_links_whose_group_the_reader_is_shown(world):
    first = register(world)["grounding_id"]
    second = register(world)["grounding_id"]
    # The curators see the statement of the first link only, the support of both.
    restrict_curators_to(world, ["support"])
    governance.record_disclosure_decision(
        actor=world.access_steward,
        dimension=world.dimension,
        values={
            "decision_ref": "urn:test:curators:statement-of-first",
            "recipient_scope": "role:curator",
            "purpose": "curation",
            "fields": ["statement"],
            "grounding_ids": [first],
        },
    )
    client = client_for(world.curator)
    assert sorted(_ids(client.get(LIST))) == sorted([first, second])
    assert _ids(client.get(LIST, {"statement_ref": "urn:answer:42#s3"})) == [first]
    assert _ids(client.get(LIST, {"answer_revision_ref": "urn:answer:42@2"})) == [first]
    assert sorted(_ids(client.get(LIST, {"support_kind": "quotation"}))) == sorted([first, second])
    # Both filters at once: both groups must be shown.
    both = client.get(LIST, {"statement_ref": "urn:answer:42#s3", "support_kind": "quotation"})
    assert _ids(both) == [first]


def _steward_without_restricted_sources(world) -> None:
    """The stewards' internal decision replaced by one that shows every field of
    public sources but does not name restricted sources."""
    internal = DisclosureDecision.objects.get(
        dimension=world.dimension, recipient_scope="role:steward", internal=True
    )
    governance.revoke_disclosure_decision(actor=world.access_steward, decision=internal)
    governance.record_disclosure_decision(
        actor=world.access_steward,
        dimension=world.dimension,
        values={
            "decision_ref": "urn:test:stewards:public-sources",
            "recipient_scope": "role:steward",
            "purpose": "stewardship",
            "fields": ["passage.locator", "passage.title", "passage.excerpt"],
            "includes_restricted_sources": False,
        },
    )


def test_a_passage_locator_filter_does_not_select_a_restricted_source_the_reader_is_not_shown(
    world,
):
    url = "https://example.org/sealed-annex"
    restricted = factories.make_passage(
        "Sealed annex text.",
        dimension=world.dimension,
        access_label="restricted",
        canonical_url=url,
    )
    public = factories.make_passage(
        "Public text.", dimension=world.dimension, canonical_url="https://example.org/open"
    )
    _steward_without_restricted_sources(world)
    client = client_for(world.steward)

    listed = client.get(PASSAGES).json()["results"]
    by_id = {p["passage_id"]: p for p in listed}
    # Listed, with the locator withheld: the filter must not select on it.
    assert "canonical_url" not in by_id[str(restricted.passage_id)]
    assert by_id[str(restricted.passage_id)]["withheld"] == [
        "passage.excerpt",
        "passage.locator",
        "passage.title",
    ]
    assert client.get(PASSAGES, {"canonical_url": url}).json()["results"] == []
    found = client.get(PASSAGES, {"canonical_url": "https://example.org/open"}).json()
    assert [p["passage_id"] for p in found["results"]] == [str(public.passage_id)]
    # A reader whose decision names restricted sources is shown it, and finds it.
    curator = client_for(world.curator)
    found = curator.get(PASSAGES, {"canonical_url": url}).json()["results"]
    assert [(p["passage_id"], p["canonical_url"]) for p in found] == [
        (str(restricted.passage_id), url)
    ]


def test_a_passage_filter_on_an_undisclosed_locator_selects_nothing_in_any_dimension(world):
    """A reader in two Dimensions, shown locators in one only, finds by URL there only."""
    url = "https://example.org/shared-page"
    mine = factories.make_passage("Shared page.", dimension=world.dimension, canonical_url=url)
    second = factories.make_dimension()
    governance.grant_role(actor=None, dimension=second, user=world.steward, role=Role.STEWARD)
    factories.make_passage("Shared page.", dimension=second, canonical_url=url)
    access_steward = factories.user_with_roles(second, Role.ACCESS_STEWARD)
    internal = DisclosureDecision.objects.get(
        dimension=second, recipient_scope="role:steward", internal=True
    )
    governance.revoke_disclosure_decision(actor=access_steward, decision=internal)
    governance.record_disclosure_decision(
        actor=access_steward,
        dimension=second,
        values={
            "decision_ref": "urn:test:stewards:titles-only",
            "recipient_scope": "role:steward",
            "purpose": "stewardship",
            "fields": ["passage.title"],
        },
    )
    found = client_for(world.steward).get(PASSAGES, {"canonical_url": url}).json()["results"]
    assert [p["passage_id"] for p in found] == [str(mine.passage_id)]
