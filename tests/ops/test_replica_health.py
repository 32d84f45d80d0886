"""Reads outlive the replica: when it is down or lags past DATABASE_REPLICA_MAX_LAG,
reads go to the primary and /readyz stays 200 with `"replica": "degraded"`.

Real parts: gunicorn serving grounding.project.wsgi on the test run's PostgreSQL, with
DATABASE_REPLICA_URL at a closed port (a replica that is gone), at a listener that
never answers (a replica host that hangs), or at the same database (a healthy one,
not in recovery: as a promoted replica is).
"""

from __future__ import annotations

import math
import time
import uuid

import psycopg
import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st

from grounding.project.replica_health import DOWN, LAGGING, OK, judge
from tests import factories
from tests.conftest import requires_postgres
from tests.ops.live import HungListener, database_url, gunicorn

API = "/api/v1/groundings/"
READY_DEGRADED = {
    "status": "ok",
    "checks": {"database": "ok", "migrations": "ok", "replica": "degraded"},
}


# -- the lag, judged from one probe of the replica


def test_a_server_not_in_recovery_is_readable():
    assert judge((False, False, None), behind_since=None, now=10.0, max_lag=5) == (OK, 0.0, None)


def test_a_caught_up_replica_of_an_idle_primary_is_not_lagging():
    # The last replayed commit is an hour old, but everything received is replayed.
    assert judge((True, True, 3600.0), behind_since=None, now=10.0, max_lag=5) == (OK, 0.0, None)


def test_a_replica_behind_is_readable_until_it_has_been_behind_past_the_limit():
    # Behind after an idle hour: the hour says nothing about the unreplayed write.
    first = judge((True, False, 3600.0), behind_since=None, now=10.0, max_lag=5)
    assert first == (OK, 0.0, 10.0)
    assert judge((True, False, 3604.0), behind_since=10.0, now=14.0, max_lag=5) == (OK, 4.0, 10.0)
    later = judge((True, False, 3606.0), behind_since=10.0, now=16.0, max_lag=5)
    assert later == (LAGGING, 6.0, 10.0)


def test_a_replica_replaying_recent_commits_is_behind_by_their_age():
    assert judge((True, False, 7.5), behind_since=0.0, now=100.0, max_lag=5) == (
        LAGGING,
        7.5,
        0.0,
    )
    assert judge((True, False, 0.5), behind_since=0.0, now=100.0, max_lag=5)[:2] == (OK, 0.5)


def test_a_replica_that_never_replayed_anything_is_behind_by_the_time_seen():
    assert judge((True, False, None), behind_since=1.0, now=9.0, max_lag=5) == (LAGGING, 8.0, 1.0)


@given(
    in_recovery=st.booleans(),
    caught_up=st.booleans(),
    age=st.none() | st.floats(min_value=-1, max_value=1e6),
    seen=st.floats(min_value=0, max_value=1e6),
    max_lag=st.integers(min_value=0, max_value=600),
)
def test_the_judged_lag_never_exceeds_what_was_seen_nor_the_age(
    in_recovery, caught_up, age, seen, max_lag
):
    now = 1e6
    state, lag, since = judge(
        (in_recovery, caught_up, age), behind_since=now - seen, now=now, max_lag=max_lag
    )
    assert state in (OK, LAGGING) and state != DOWN
    assert 0 <= lag <= seen + 1e-6 and (age is None or lag <= max(age, 0))
    assert (state == OK) == (lag <= max_lag)
    assert (since is None) == (lag == 0 and (not in_recovery or caught_up))
    assert not math.isnan(lag)


# -- served: a real app server with a real (or a lost) replica


def _ready(base: str) -> dict:
    answer = requests.get(base + "/readyz", timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()


def _reads(base: str, token: str, link_id) -> None:
    for _ in range(3):
        detail = requests.get(
            f"{base}{API}{link_id}/", headers={"Authorization": f"Token {token}"}, timeout=30
        )
        assert detail.status_code == 200, detail.text[:500]
        assert detail.json()["grounding_id"] == str(link_id)


@pytest.mark.parametrize("where", ["closed port", "hung host"])
@requires_postgres
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_lost_replica_degrades_readiness_and_reads_go_to_the_primary(world, link, where):
    token = factories.token_for(world.curator)
    with HungListener() as hung:
        replica = hung.url if where == "hung host" else "postgres://grounding@127.0.0.1:1/x"
        with gunicorn(database_url(), DATABASE_REPLICA_URL=replica) as base:
            started = time.monotonic()
            assert _ready(base) == READY_DEGRADED
            assert time.monotonic() - started < 5  # a deadline: never the hung connect
            _reads(base, token, link.pk)
            assert _ready(base) == READY_DEGRADED
            # Writes go on too.
            patched = requests.patch(
                f"{base}{API}{link.pk}/",
                json={"owner_ref": "urn:team:x", "revision_reason": "handover"},
                headers={"Authorization": f"Token {token}", "If-Match": '"1"'},
                timeout=30,
            )
            assert patched.status_code == 200, patched.text[:500]


@requires_postgres
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_healthy_replica_serves_the_reads_and_readiness_says_ok(world, link):
    token = factories.token_for(world.curator)
    name = f"replica-{uuid.uuid4().hex[:8]}"
    replica = f"{database_url()}?application_name={name}"
    with gunicorn(database_url(), DATABASE_REPLICA_URL=replica) as base:
        assert _ready(base) == {
            "status": "ok",
            "checks": {"database": "ok", "migrations": "ok", "replica": "ok"},
        }
        _reads(base, token, link.pk)
        with psycopg.connect(database_url().replace("postgres://", "postgresql://")) as admin:
            queries = [
                query
                for (query,) in admin.execute(
                    "SELECT query FROM pg_stat_activity WHERE application_name = %s", (name,)
                )
            ]
    # The detail was read on the replica's sessions (beside the monitor's probe).
    assert any(query.startswith('SELECT "grounding_') for query in queries), queries
