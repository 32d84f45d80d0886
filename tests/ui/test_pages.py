"""The human-readable record view, through the Django test client."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from grounding import services
from grounding.templatetags.grounding_tags import highlight
from policies import governance
from policies.models import DisclosureDecision
from tests import factories

pytestmark = pytest.mark.urls("tests.ui.urls")


def page_url(link) -> str:
    return reverse("grounding-page", args=[link.pk])


def resolved(world, link):
    services.record_anchor_observation(
        actor=world.curator,
        grounding_id=link.pk,
        expected_revision=link.revision,
        use_builtin_resolver=True,
    )
    return link


def ambiguous_link(world, text="It opened. Later it opened. It opened again.", exact="opened"):
    passage = factories.make_passage(text, dimension=world.dimension)
    payload = factories.link_payload(world.dimension, world.profile, passage)
    payload["anchor"]["source_selector"] = {"type": "TextQuoteSelector", "exact": exact}
    link = services.register(actor=world.curator, payload=payload)
    return resolved(world, link)


def test_the_page_requires_login(client, link):
    response = client.get(page_url(link))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_the_resolved_span_is_highlighted_in_the_passage_text(client, world, link):
    resolved(world, link)
    client.force_login(world.curator)
    html = client.get(page_url(link)).content.decode()
    assert (
        '<mark class="anchor-match" data-match="1" title="match 1 of 1">opened in 1932</mark>'
        in html
    )
    assert "Anchor resolved: 1 match" in html
    assert html.count("<mark") == 1


def test_an_ambiguous_anchor_marks_every_match_and_says_so(client, world):
    link = ambiguous_link(world)
    client.force_login(world.curator)
    html = client.get(page_url(link)).content.decode()
    marks = re.findall(r'<mark class="anchor-match" data-match="(\d)"[^>]*>opened</mark>', html)
    assert marks == ["1", "2", "3"]
    assert "Ambiguous anchor: 3 matches. None is picked; every match is marked." in html


def test_overlapping_matches_are_all_marked_with_their_indexes():
    text = "aaaa"
    import hashlib

    result = {
        "status": "ambiguous",
        "match_count": 3,
        "matches": [{"start": 0, "end": 2}, {"start": 1, "end": 3}, {"start": 2, "end": 4}],
        "text_sha256": hashlib.sha256(text.encode()).hexdigest(),
    }
    html = str(highlight(text, result))
    assert re.findall(r'data-match="([\d ]+)"', html) == ["1", "1 2", "2 3", "3"]
    assert re.sub(r"<[^>]+>", "", html) == text


def test_offsets_of_another_representation_are_not_applied():
    result = {"status": "resolved", "matches": [{"start": 0, "end": 2}], "text_sha256": "0" * 64}
    assert "<mark" not in str(highlight("<b>hi</b>", result))
    assert str(highlight("<b>hi</b>", result)) == "&lt;b&gt;hi&lt;/b&gt;"


def test_source_title_and_text_are_escaped(client, world):
    passage = factories.make_passage(
        "Before <script>alert('text')</script> The bridge opened in 1932.",
        title="<script>alert('title')</script>",
        dimension=world.dimension,
    )
    link = factories.register_link(world.curator, world.dimension, world.profile, passage)
    resolved(world, link)
    client.force_login(world.curator)
    html = client.get(page_url(link)).content.decode()
    assert "<script>" not in html
    assert "&lt;script&gt;alert(&#x27;title&#x27;)&lt;/script&gt;" in html
    assert "&lt;script&gt;alert(&#x27;text&#x27;)&lt;/script&gt;" in html
    assert (
        '<mark class="anchor-match" data-match="1" title="match 1 of 1">opened in 1932</mark>'
        in (html)
    )


def narrow_reviewer_decision(world, fields):
    """Replace the reviewers' internal decision by one covering only `fields`."""
    internal = DisclosureDecision.objects.get(
        dimension=world.dimension, recipient_scope="role:reviewer", internal=True
    )
    governance.revoke_disclosure_decision(actor=world.access_steward, decision=internal)
    governance.record_disclosure_decision(
        actor=world.access_steward,
        dimension=world.dimension,
        values={
            "decision_ref": f"urn:test:{world.dimension.name}:reviewer-narrow",
            "recipient_scope": "role:reviewer",
            "purpose": "review",
            "fields": fields,
        },
    )


def test_withheld_fields_are_named_and_not_shown(client, world, link):
    resolved(world, link)
    narrow_reviewer_decision(world, ["statement", "support"])
    client.force_login(world.reviewer)
    response = client.get(page_url(link))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Withheld from you" in html
    for name in ("passage.excerpt", "passage.title", "anchor.selector", "assessments.verdict"):
        assert f"<li><code>{name}</code></li>" in html
    assert "It spans the river" not in html  # the excerpt is withheld
    assert "<mark" not in html
    assert "Bridge history" not in html  # the title is withheld
    assert "urn:answer:42#s3" in html  # the statement is covered


def test_a_user_of_another_dimension_gets_404(client, world, link):
    client.force_login(world.outsider)
    response = client.get(page_url(link))
    assert response.status_code == 404
    assert "urn:answer:42" not in response.content.decode()


def test_a_reader_without_a_covering_decision_gets_403(client, world, link):
    client.force_login(world.projection_agent)
    response = client.get(page_url(link))
    assert response.status_code == 403
    assert "This record is not disclosed to you" in response.content.decode()
    assert "urn:answer:42" not in response.content.decode()


def test_an_unknown_link_is_404(client, world):
    client.force_login(world.curator)
    response = client.get("/groundings/00000000-0000-7000-8000-000000000000/")
    assert response.status_code == 404


def test_the_page_shows_states_assessments_and_the_timeline(client, world, link):
    resolved(world, link)
    services.bind_assessment(
        actor=world.reviewer,
        grounding_id=link.pk,
        expected_revision=2,
        assessment=factories.assessment_body(2),
    )
    client.force_login(world.curator)
    html = client.get(page_url(link)).content.decode()
    assert "display: visible" in html and "record: candidate" in html
    assert "urn:method:nli@2" in html and "urn:reviewer:r1" in html
    assert '<span class="badge badge-current">current</span>' in html
    assert html.count('class="timeline-rev"') == 3


def test_the_page_fetches_nothing_from_other_hosts(client, world, link):
    resolved(world, link)
    client.force_login(world.curator)
    html = client.get(page_url(link)).content.decode()
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html)
    assert "/static/grounding/registry.css" in html
