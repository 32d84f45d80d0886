"""The record page names who acted only to a reader shown `assessments.reviewer`:
the account that bound an assessment is the reviewer's (API.md "Tenancy")."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests import factories
from tests.api.helpers import restrict_curators_to

pytestmark = pytest.mark.urls("tests.ui.urls")

EVERY_FIELD = [
    "statement",
    "support",
    "passage.locator",
    "passage.title",
    "passage.excerpt",
    "anchor.selector",
    "assessments.verdict",
    "assessments.reviewer",
]


def _timeline(client, link) -> str:
    html = client.get(reverse("grounding-page", args=[link.pk])).content.decode()
    return html[html.index('id="timeline-title"') :]


def test_the_timeline_names_accounts_only_where_reviewers_are_shown(client, world, link):
    factories.assess(world.reviewer, link)
    client.force_login(world.curator)
    shown = _timeline(client, link)
    assert world.curator.username in shown and world.reviewer.username in shown

    restrict_curators_to(world, [f for f in EVERY_FIELD if f != "assessments.reviewer"])
    hidden = _timeline(client, link)
    assert world.curator.username not in hidden
    assert world.reviewer.username not in hidden
    assert hidden.count("· withheld") == 2
