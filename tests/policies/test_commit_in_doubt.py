"""A write whose COMMIT loses its connection is in doubt (it may be durable, its
answer lost): the request is marked so (`write_in_doubt`) and the API writes no
refused event for it, which could contradict an applied one (make ha-drill saw both
under one request id when the leader was lost during a synchronous COMMIT). A write
that loses its connection before its COMMIT is not in doubt: nothing was written.

Real PostgreSQL: the body's backend is terminated from another session while the
body holds its transaction, so the next statement the entry sends, its COMMIT or the
body's own, finds the connection gone.
"""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection

from common.kernel import request_context
from policies.actions import public_entry
from tests.conftest import requires_postgres
from tests.ops.live import superuser, wait_backend_gone

pytestmark = [requires_postgres, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _stalled(*, then_query: bool) -> str:
    """The body's own backend terminated from another session (as a leader change
    terminates every session: 57P01) while the body holds its transaction."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with superuser() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        wait_backend_gone(admin, pid, what="the body's backend gone")
    if then_query:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    return "done"


def do_stall_then_commit(*, actor=None) -> str:
    return _stalled(then_query=False)


def do_stall_then_query(*, actor=None) -> str:
    return _stalled(then_query=True)


@pytest.fixture
def in_request():
    token = request_context._in_doubt.set([])
    yield
    request_context._in_doubt.reset(token)


def test_a_commit_that_loses_its_connection_leaves_the_write_in_doubt(in_request):
    entry = public_entry("test_stall", do_stall_then_commit, context=lambda kw: {}, screen=None)
    with pytest.raises(DatabaseError):
        entry()
    assert request_context.write_in_doubt() is True


def test_a_connection_lost_before_the_commit_is_no_doubt(in_request):
    entry = public_entry("test_stall", do_stall_then_query, context=lambda kw: {}, screen=None)
    with pytest.raises(DatabaseError):
        entry()
    assert request_context.write_in_doubt() is False
