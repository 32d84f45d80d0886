"""The quote is marked in the passage text on the human page and the admin change
page: from the recorded anchor result when it applies to the text shown, otherwise
located for display by the builtin resolver (nothing recorded)."""

from __future__ import annotations

import re

import pytest

from grounding import services
from grounding.models import AnchorObservation, GroundingLink
from grounding.pages.quote import quote_marks
from tests import factories
from tests.ui.test_admin import change_url, staff
from tests.ui.test_pages import narrow_reviewer_decision, page_url

pytestmark = pytest.mark.urls("tests.ui.urls")


def marks(html: str) -> list[str]:
    block = re.search(r'id="passage-text">(.*?)</blockquote>', html, re.S).group(1)
    return re.findall(r"<mark[^>]*>(.*?)</mark>", block)


@pytest.mark.parametrize("where", ["page", "admin"])
def test_an_unobserved_link_has_its_quote_marked_without_recording(client, world, link, where):
    staff(world.curator)
    client.force_login(world.curator)
    html = client.get(page_url(link) if where == "page" else change_url(link)).content.decode()
    assert marks(html) == ["opened in 1932"]
    assert "the builtin resolver located the quote for this page only" in html
    assert "1 match marked, none picked" in html
    assert not AnchorObservation.objects.filter(link=link).exists()
    stored = GroundingLink.objects.get(pk=link.pk)
    assert (stored.revision, stored.resolution_state) == (1, "unattempted")


@pytest.mark.parametrize("where", ["page", "admin"])
def test_every_match_of_an_ambiguous_quote_is_marked_and_text_stays_escaped(client, world, where):
    passage = factories.make_passage(
        "<b>opened</b> then opened & opened again", dimension=world.dimension
    )
    payload = factories.link_payload(world.dimension, world.profile, passage)
    payload["anchor"]["source_selector"] = {"type": "TextQuoteSelector", "exact": "opened"}
    link = services.register(actor=world.curator, payload=payload)
    staff(world.curator)
    client.force_login(world.curator)
    html = client.get(page_url(link) if where == "page" else change_url(link)).content.decode()
    assert marks(html) == ["opened", "opened", "opened"]
    assert "&lt;b&gt;<mark" in html and "&amp; <mark" in html
    assert "3 matches marked, none picked" in html


def test_no_marks_when_the_selector_is_withheld(client, world, link):
    narrow_reviewer_decision(world, ["statement", "passage.excerpt"])
    staff(world.reviewer)
    client.force_login(world.reviewer)
    for address in (page_url(link), change_url(link)):
        html = client.get(address).content.decode()
        assert marks(html) == [] and "builtin resolver located" not in html
        assert "The bridge opened in 1932. It spans the river." in html


def test_a_recorded_result_for_another_text_marks_nothing():
    document = {
        "passage": {"excerpt": "The bridge opened in 1932."},
        "anchor": {
            "source_selector": {"type": "TextQuoteSelector", "exact": "opened"},
            "anchor_result": {
                "status": "resolved",
                "match_count": 1,
                "matches": [{"start": 0, "end": 3}],
                "resolver_ref": "urn:r",
                "text_sha256": "0" * 64,
            },
        },
    }
    shown = quote_marks(document)
    assert (shown.result, shown.applies, shown.previewed) == (None, False, False)
