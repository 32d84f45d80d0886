from __future__ import annotations

import time
from dataclasses import dataclass

import pytest
from django.db import connection

from policies.choices import Role
from tests import factories

requires_postgres = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="needs PostgreSQL: set DATABASE_URL=postgres://… (.ci/run's second pass does)",
)


def wait_for_lock_waiters(count: int) -> None:
    """Until `count` sessions of this database wait on a row or index lock
    (PostgreSQL): how race tests know the contenders are where they should be."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0] >= count:
                return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} transactions waiting on a lock")


@dataclass
class World:
    dimension: object
    profile: object
    curator: object
    reviewer: object
    access_steward: object
    steward: object
    projection_agent: object
    outsider: object
    passage: object


@pytest.fixture
def world(db) -> World:
    dimension = factories.make_dimension()
    profile = factories.make_profile()
    return World(
        dimension=dimension,
        profile=profile,
        curator=factories.user_with_roles(dimension, Role.CURATOR),
        reviewer=factories.user_with_roles(dimension, Role.REVIEWER),
        access_steward=factories.user_with_roles(dimension, Role.ACCESS_STEWARD),
        steward=factories.user_with_roles(dimension, Role.STEWARD),
        projection_agent=factories.user_with_roles(dimension, Role.PROJECTION_AGENT),
        outsider=factories.UserFactory(),
        passage=factories.make_passage(dimension=dimension),
    )


@pytest.fixture
def link(world):
    return factories.register_link(world.curator, world.dimension, world.profile, world.passage)


@pytest.fixture(autouse=True)
def _test_settings(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # An API answer its operation does not declare fails the request (#26): every test
    # that provokes an answer proves it is declared (common.web.operations).
    settings.GROUNDING_STRICT_ANSWERS = True


# The suite's longest tests (30 s to two minutes each on two cores, `--durations=50`,
# 2026-12-06), started first: pytest-xdist hands tests out in collection order, and
# one of these collected late (tests/ops, tests/leaks) ran alone at the end while the
# other worker idled, minutes of a run. Longest first, then the rest in their order.
RUN_FIRST = (
    "tests/ops/test_readme.py::test_every_readme_shell_block_works_as_written",
    "tests/api/test_schemathesis.py::test_every_operation_conforms_to_the_schema",
    "tests/leaks/test_leak_matrix.py::",
    "tests/leaks/test_admin_matrix.py::",
    "tests/ops/test_chunked.py::",
    "tests/ops/test_health.py::test_readyz_is_unavailable_while_migrations_are_pending",
    "tests/leaks/test_foreign_ids.py::",
    "tests/evidence/test_migration_dimension.py::",
    "tests/policies/test_migration_internal_refs.py::",
    "tests/ops/test_sick_database.py::",
    "tests/ops/test_packaging.py::",
)


def _first_rank(item: pytest.Item) -> int:
    for rank, prefix in enumerate(RUN_FIRST):
        if item.nodeid.startswith(prefix):
            return rank
    return len(RUN_FIRST)


def pytest_collection_modifyitems(session, config, items: list[pytest.Item]) -> None:
    items.sort(key=_first_rank)  # stable: the same order on every worker


def pytest_sessionfinish(session, exitstatus) -> None:
    """With GROUNDING_UNANSWERED_REPORT=<file>: write there each declared answer
    (route, method, status, code) no test of the session provoked — a declared
    refusal the suite never reaches is either untested or not answerable (#26)."""
    import os

    target = os.environ.get("GROUNDING_UNANSWERED_REPORT")
    if not target:
        return
    from common.web.operations import ANSWERED, answers, api_routes

    lines = []
    for route in sorted(api_routes(), key=lambda r: (r.name, r.method)):
        for status, codes in answers(route.operation, route.method).items():
            for code in sorted(codes) or [None]:
                if (route.operation, route.method, status, code) not in ANSWERED:
                    lines.append(f"{route.method} {route.name} {status} {code or ''}")
    with open(target, "w") as report:
        report.write("\n".join(lines) + "\n")
