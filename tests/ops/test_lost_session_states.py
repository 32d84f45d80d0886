"""Which database errors say the session is gone (`common.kernel.lost_connection.
is_lost`), seen on real PostgreSQL sessions ended by the server.

A session the server ends for idling in its transaction (SQLSTATE 25P03,
idle_in_transaction_session_timeout: a FATAL, the connection closed behind it) is as
lost as one terminated by a leader change (57P01): the request is answered 503
`database_unavailable` and the session discarded, not 500.
"""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from common.kernel.lost_connection import is_lost, sqlstate
from tests.conftest import requires_postgres
from tests.ops.live import superuser, wait_backend_gone

pytestmark = [requires_postgres, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _error_once_the_server_ended(pid_of_session, end) -> DatabaseError:
    """The error the session's next statement raises once `end` made the server end
    it (waited for: its backend gone from pg_stat_activity)."""
    raised = None
    with superuser() as admin:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                pid = pid_of_session(cursor)
                end(admin, pid)
                wait_backend_gone(admin, pid, what="the backend ended by the server")
                cursor.execute("SELECT 1")
        except DatabaseError as error:
            raised = error
        finally:
            connection.close()
    assert raised is not None, "the statement on the ended session did not fail"
    return raised


def test_a_session_ended_for_idling_in_its_transaction_is_lost():
    def idle_timeout(cursor) -> int:
        cursor.execute("SET LOCAL idle_in_transaction_session_timeout = '50ms'")
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]

    error = _error_once_the_server_ended(idle_timeout, lambda admin, pid: None)
    assert sqlstate(error) == "25P03"
    assert is_lost(error)


def test_a_session_terminated_by_the_administrator_is_lost():
    def backend(cursor) -> int:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]

    error = _error_once_the_server_ended(
        backend, lambda admin, pid: admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    )
    assert is_lost(error)


def test_a_statement_the_request_got_wrong_is_not_lost():
    with (
        pytest.raises(DatabaseError) as raised,
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("SELECT 1 / 0")
    assert sqlstate(raised.value) == "22012"
    assert not is_lost(raised.value)
