"""The review queue in the admin: pending links first with the notification that sent
them, the review-deadline action, and the read-only notification pages."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from grounding import services
from grounding.models import ChangeNotification, GroundingLink
from tests import factories
from tests.ui.test_admin import CHANGELIST, staff

pytestmark = pytest.mark.urls("tests.ui.urls")


def notify(world, **overrides):
    values = {
        "dimension": world.dimension.name,
        "change_ref": "urn:change:cms-1",
        "kind": "source",
        "subject_ref": world.passage.canonical_url,
        "observed_at": "2026-12-01T09:00:00Z",
        "reason": "re-published",
    }
    values.update(overrides)
    return services.notify_change(actor=world.curator, payload=values).notification


def test_pending_links_come_first_with_the_notification_that_sent_them(client, world):
    other = factories.make_passage("Elsewhere.", dimension=world.dimension)
    pending = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    for _ in range(2):
        factories.register_link(world.curator, world.dimension, world.profile, other)
    notification = notify(world)
    staff(world.curator)
    client.force_login(world.curator)
    html = client.get(reverse(CHANGELIST)).content.decode()
    rows = re.findall(r'name="_selected_action" value="([^"]+)"', html)
    assert rows[0] == str(pending.pk)
    address = reverse("admin:grounding_changenotification_change", args=[notification.pk])
    assert f'<a href="{address}" title="urn:change:cms-1">urn:change:cms-1</a>' in html
    queue = client.get(reverse(CHANGELIST), {"change_ref": "urn:change:cms-1"}).content.decode()
    assert re.findall(r'name="_selected_action" value="([^"]+)"', queue) == [str(pending.pk)]


def test_the_review_deadline_action_sends_overdue_selected_links_to_review(client, world):
    time = {"asserted_at": "2026-11-30T12:00:00Z", "review_due": "2026-01-01T00:00:00Z"}
    overdue = factories.register_link(
        world.curator, world.dimension, world.profile, world.passage, time=time
    )
    fresh = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    staff(world.curator)
    client.force_login(world.curator)
    response = client.post(
        reverse(CHANGELIST),
        {"action": "send_overdue_to_review", "_selected_action": [overdue.pk, fresh.pk]},
        follow=True,
    )
    assert "1 links sent to review" in response.content.decode()
    assert GroundingLink.objects.get(pk=overdue.pk).recheck_state == "pending_review"
    assert GroundingLink.objects.get(pk=fresh.pk).revision == 1
    [notification] = ChangeNotification.objects.all()
    assert notification.kind == "review_due"
    again = client.post(
        reverse(CHANGELIST),
        {"action": "send_overdue_to_review", "_selected_action": [overdue.pk]},
        follow=True,
    )
    assert "None of the selected links is past its review_due." in again.content.decode()


def test_notification_pages_are_read_only_and_scoped_to_the_readers_dimensions(client, world):
    factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    notification = notify(world)
    staff(world.curator)
    client.force_login(world.curator)
    listing = client.get(reverse("admin:grounding_changenotification_changelist"))
    assert "urn:change:cms-1" in listing.content.decode()
    page = client.get(reverse("admin:grounding_changenotification_change", args=[notification.pk]))
    assert page.status_code == 200
    assert "1 links" in page.content.decode()
    assert 'name="_save"' not in page.content.decode()
    outsider = factories.user_with_roles(factories.make_dimension(), "curator")
    staff(outsider)
    client.force_login(outsider)
    other = client.get(reverse("admin:grounding_changenotification_changelist"))
    assert "urn:change:cms-1" not in other.content.decode()
