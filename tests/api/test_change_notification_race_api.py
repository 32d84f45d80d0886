"""A change notification racing a PATCH of the same link, over real HTTP on
PostgreSQL: whichever takes the link's lock first, both apply once (the loser of
the If-Match race retries on 412), each makes exactly one revision, and neither
change is lost."""

from __future__ import annotations

import threading

import pytest
import requests
from django.db import DEFAULT_DB_ALIAS, connections

from grounding.models import ChangeNotificationLink, GroundingLink
from tests import factories
from tests.conftest import requires_postgres, wait_for_lock_waiters


@requires_postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("first", ["notification", "patch"])
def test_a_notification_racing_a_patch_loses_nothing(world, live_server, first):
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    token = factories.token_for(world.curator)
    headers = {"Authorization": f"Token {token}"}
    results: dict[str, list[int]] = {"notification": [], "patch": []}

    def notify() -> None:
        response = requests.post(
            f"{live_server.url}/api/v1/change-notifications/",
            json={
                "dimension": world.dimension.name,
                "change_ref": "urn:change:race",
                "kind": "source",
                "subject_ref": world.passage.canonical_url,
                "observed_at": "2026-12-01T09:00:00Z",
                "reason": "re-published",
            },
            headers=headers,
            timeout=60,
        )
        results["notification"].append(response.status_code)

    def patch() -> None:
        endpoint = f"{live_server.url}/api/v1/groundings/{link.grounding_id}/"
        revision = 1
        for _ in range(3):
            response = requests.patch(
                endpoint,
                json={"owner_ref": "role:patched", "revision_reason": "new owner"},
                headers={**headers, "If-Match": f'"{revision}"'},
                timeout=60,
            )
            results["patch"].append(response.status_code)
            if response.status_code != 412:
                return
            revision = response.json()["current_revision"]

    order = [notify, patch] if first == "notification" else [patch, notify]
    threads = [threading.Thread(target=fn) for fn in order]
    # Another session holds the link's lock so both writers queue on it, in a known
    # order (pg_stat_activity is read outside any transaction: it is snapshotted).
    blocker = connections.create_connection(DEFAULT_DB_ALIAS)
    try:
        with blocker.cursor() as cursor:
            cursor.execute("BEGIN")
            cursor.execute(
                "SELECT 1 FROM grounding_groundinglink WHERE grounding_id = %s FOR UPDATE",
                [link.grounding_id],
            )
            threads[0].start()
            wait_for_lock_waiters(1)
            threads[1].start()
            wait_for_lock_waiters(2)
            cursor.execute("COMMIT")
    finally:
        blocker.close()
    for thread in threads:
        thread.join(timeout=120)

    assert results["notification"] == [201]
    assert results["patch"][-1] == 200
    stored = GroundingLink.objects.get(pk=link.grounding_id)
    assert stored.revision == 3
    assert (stored.owner_ref, stored.change_ref, stored.recheck_state) == (
        "role:patched",
        "urn:change:race",
        "pending_review",
    )
    history = GroundingLink.history.filter(grounding_id=link.grounding_id)
    assert sorted(history.values_list("revision", flat=True)) == [1, 2, 3]
    given = ChangeNotificationLink.objects.get(link_id=link.grounding_id).revision
    at_given = history.get(revision=given)
    assert at_given.change_ref == "urn:change:race"
    if given == 2:  # the notification took the lock first; the PATCH retried once
        assert results["patch"] == [412, 200]
        assert history.get(revision=2).owner_ref == "role:grounding-curator"
    else:
        assert results["patch"] == [200]
        assert (history.get(revision=2).owner_ref, history.get(revision=2).change_ref) == (
            "role:patched",
            "",
        )
