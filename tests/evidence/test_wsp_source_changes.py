"""A WSP import that brings changed extracted text for a bound source records a
`source` change notification and sends the Dimension's links of that source back to
review (docs/api.md "WSP import", `changes`); snippets never do; replays change
nothing."""

from __future__ import annotations

import copy

import pytest

from evidence.models import Passage
from evidence.services.wsp_import import import_wsp_document
from evidence.wsp.builders import projected_text
from grounding.models import ChangeNotification, GroundingLink
from policies.choices import Role
from tests import factories
from tests.evidence.conftest import load, wsp_document

URL = "https://example.org/cafe"
ORIGINAL = "Café Unicode 𝔘 notes.\n\nThe bridge opened in 1932."


def extract(execution_id: str, text: str) -> dict:
    """The extract fixture as another execution, its document text replaced."""
    document = load("extract")
    document["execution_id"] = execution_id
    document["request_id"] = f"req-{execution_id}"
    observation = document["observations"][0]
    observation["text"] = text
    result = document["results"][0]
    result["text"] = projected_text(text, observation["observation_id"], "text")
    return document


@pytest.fixture
def bound(world):
    """A link of the world's Dimension bound to the extracted document's passage."""
    report = import_wsp_document(
        actor=world.curator, document=extract("exec-v1", ORIGINAL), dimension=world.dimension
    ).report
    passage = Passage.objects.get(pk=report["passages"][0]["passage_id"])
    link = factories.register_link(world.curator, world.dimension, world.profile, passage)
    factories.assess(world.reviewer, link)
    assert GroundingLink.objects.get(pk=link.pk).display_state == "visible"
    return link


def test_changed_extracted_text_sends_the_bound_links_to_review(world, bound):
    result = import_wsp_document(
        actor=world.curator,
        document=extract("exec-v2", ORIGINAL.replace("1932", "1933")),
        dimension=world.dimension,
    )
    [change] = result.report["changes"]
    assert (change["canonical_url"], change["affected"]) == (URL, 1)
    link = GroundingLink.objects.get(pk=bound.pk)
    assert (link.revision, link.recheck_state, link.change_ref) == (
        3,
        "pending_review",
        change["change_ref"],
    )
    # The supporting assessment of the old revision no longer makes it visible.
    assert link.display_state == "unassessed"
    notification = ChangeNotification.objects.get(change_ref=change["change_ref"])
    assert (notification.kind, notification.subject_ref) == ("source", URL)


def test_replaying_the_import_changes_nothing(world, bound):
    document = extract("exec-v2", ORIGINAL.replace("1932", "1933"))
    first = import_wsp_document(actor=world.curator, document=document, dimension=world.dimension)
    again = import_wsp_document(
        actor=world.curator, document=copy.deepcopy(document), dimension=world.dimension
    )
    assert (first.created, again.created) == (True, False)
    assert again.report == first.report
    # The same changed text from another execution is the same change: no new revision.
    third = import_wsp_document(
        actor=world.curator,
        document=extract("exec-v3", ORIGINAL.replace("1932", "1933")),
        dimension=world.dimension,
    )
    assert third.report["changes"] == first.report["changes"]
    assert GroundingLink.objects.get(pk=bound.pk).revision == 3
    assert ChangeNotification.objects.count() == 1


def test_the_same_text_again_is_no_change(world, bound):
    result = import_wsp_document(
        actor=world.curator, document=extract("exec-same", ORIGINAL), dimension=world.dimension
    )
    assert "changes" not in result.report
    assert GroundingLink.objects.get(pk=bound.pk).revision == 2


def test_a_search_snippet_of_the_source_is_never_a_source_change(world, bound):
    document = wsp_document("exec-snippet", ["A different snippet of the café page."])
    document["observations"][0]["url"] = {"observed": URL, "canonical": URL}
    result = import_wsp_document(actor=world.curator, document=document, dimension=world.dimension)
    assert "changes" not in result.report
    assert GroundingLink.objects.get(pk=bound.pk).recheck_state == "current"


def test_another_dimensions_import_leaves_these_links_alone(world, bound):
    other = factories.make_dimension()
    curator = factories.user_with_roles(other, Role.CURATOR)
    result = import_wsp_document(
        actor=curator,
        document=extract("exec-v2", ORIGINAL.replace("1932", "1933")),
        dimension=other,
    )
    assert "changes" not in result.report
    assert GroundingLink.objects.get(pk=bound.pk).revision == 2


def test_the_review_queue_lists_the_link_by_its_change(world, bound):
    change = import_wsp_document(
        actor=world.curator,
        document=extract("exec-v2", ORIGINAL.replace("1932", "1933")),
        dimension=world.dimension,
    ).report["changes"][0]
    from tests.api.helpers import client_for

    queue = client_for(world.curator).get(
        "/api/v1/groundings/",
        {"recheck_state": "pending_review", "change_ref": change["change_ref"]},
    )
    assert [item["grounding_id"] for item in queue.json()["results"]] == [str(bound.pk)]
