"""The admin's link history page marks each revision by the log, with its leaf index and
the proof to download; it answers another Dimension's staff as the API does (404)."""

from __future__ import annotations

import json
import re

from django.db import connection
from django.urls import reverse

from grounding import services
from grounding.models import GroundingLink
from tests import factories
from tests.api.helpers import client_for, url
from transparency import sequencer


def _staff(user):
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    return user


def _cells(html: str) -> list[str]:
    """The history table's log cells, tags stripped, in revision order."""
    cells = re.findall(r'<td class="log-[a-z]+">(.*?)</td>', html, re.S)
    return [re.sub(r"<[^>]+>", "", c).strip() for c in cells]


def _revise(world, link) -> None:
    services.revise(
        actor=world.curator,
        grounding_id=link.pk,
        expected_revision=1,
        changes={"owner_ref": "urn:team:b", "revision_reason": "handover"},
    )


def test_each_revision_is_marked_by_the_log(client, world, link):
    _revise(world, link)
    client.force_login(_staff(world.curator))
    history = reverse("admin:grounding_groundinglink_history", args=[link.pk])
    assert _cells(client.get(history).content.decode()) == ["pending", "pending"]
    sequencer.integrate()
    assert _cells(client.get(history).content.decode()) == [
        "verified · leaf 0 · proof",
        "verified · leaf 1 · proof",
    ]
    # A revision's history row rewritten behind the registry's back fails.
    row = GroundingLink.history.get(grounding_id=link.pk, revision=2).history_id
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE grounding_historicalgroundinglink SET owner_ref = %s WHERE history_id = %s",
            ["urn:team:mallory", row],
        )
    assert _cells(client.get(history).content.decode()) == [
        "verified · leaf 0 · proof",
        "failed · leaf 1 · proofthe history row is not the committed one",
    ]


def test_the_proof_downloads_as_the_api_serves_it(client, world, link):
    _revise(world, link)
    sequencer.integrate()
    client.force_login(_staff(world.curator))
    response = client.get(reverse("admin:grounding_link_proof", args=[link.pk, 2]))
    assert response.status_code == 200
    assert response["Content-Disposition"] == (f'attachment; filename="{link.pk}-r2-proof.json"')
    api = client_for(world.curator).get(url(link.pk, "revisions/2/proof/")).json()
    assert json.loads(response.content) == api
    missing = client.get(reverse("admin:grounding_link_proof", args=[link.pk, 3]))
    assert missing.status_code == 404


def test_another_dimension_s_staff_get_404(client, world, link):
    sequencer.integrate()
    other = factories.make_dimension()
    stranger = _staff(factories.user_with_roles(other, "curator"))
    client.force_login(stranger)
    for name, args in (
        ("admin:grounding_groundinglink_history", [link.pk]),
        ("admin:grounding_link_proof", [link.pk, 1]),
    ):
        assert client.get(reverse(name, args=args)).status_code == 404
