"""No lost update: concurrent PATCHes of the same revision over real HTTP."""

from __future__ import annotations

import threading

import pytest
import requests

from grounding.models import GroundingLink
from tests import factories
from tests.conftest import requires_postgres

WRITERS = 10


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_patches_of_one_revision_apply_exactly_once(world, live_server):
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    token = factories.token_for(world.curator)
    endpoint = f"{live_server.url}/api/v1/groundings/{link.grounding_id}/"
    barrier = threading.Barrier(WRITERS)
    results: list[tuple[int, dict]] = []
    lock = threading.Lock()

    def write(n: int) -> None:
        with requests.Session() as session:
            barrier.wait(timeout=30)
            response = session.patch(
                endpoint,
                json={"owner_ref": f"role:writer-{n}", "revision_reason": f"writer {n}"},
                headers={"Authorization": f"Token {token}", "If-Match": '"1"'},
                timeout=60,
            )
        with lock:
            results.append((response.status_code, response.json()))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    statuses = sorted(status for status, _ in results)
    assert statuses == [200] + [412] * (WRITERS - 1)
    winner = next(body for status, body in results if status == 200)
    assert winner["revision"] == 2
    for status, body in results:
        if status == 412:
            assert body["code"] == "revision_mismatch"
            assert body["current_revision"] == 2
    link.refresh_from_db()
    assert link.revision == 2
    assert link.owner_ref == winner["owner_ref"]
    history = GroundingLink.history.filter(grounding_id=link.grounding_id)
    assert sorted(history.values_list("revision", flat=True)) == [1, 2]
