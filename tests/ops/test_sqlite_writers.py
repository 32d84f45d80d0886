"""Two writers on one SQLite file (`make run`: the dev server's threads and the
inline log sequencer), through Django's own SQLite backend.

A deferred transaction that read first and then writes, while another transaction
holds the write lock, is answered "database is locked" at once: SQLite does not wait
(that would deadlock both). With the project's SQLite options (IMMEDIATE: the lock
taken at BEGIN) the second writer waits its turn and both commit."""

from __future__ import annotations

import threading

import pytest
from django.db import OperationalError
from django.db.backends.sqlite3.base import DatabaseWrapper

from grounding.project.db_timeouts import SQLITE_OPTIONS


def _wrapper(path, options: dict) -> DatabaseWrapper:
    settings = {
        "ENGINE": "django.db.backends.sqlite3", "NAME": str(path), "OPTIONS": options,
        "ATOMIC_REQUESTS": False, "AUTOCOMMIT": True, "CONN_MAX_AGE": 0,
        "CONN_HEALTH_CHECKS": False, "TIME_ZONE": None, "USER": "", "PASSWORD": "",
        "HOST": "", "PORT": "", "TEST": {},
    }  # fmt: skip
    return DatabaseWrapper(settings, alias="sqlite-writers")


def _two_writers(path, options: dict) -> list[str]:
    """A reads, then B takes the write lock and holds it briefly, then A writes.
    What each saw: "committed" or the error."""
    setup = _wrapper(path, options)
    with setup.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS t (n integer)")
    setup.close()
    b_holds, a_read = threading.Event(), threading.Event()
    outcome: dict[str, str] = {}

    def writer(name: str) -> None:
        connection = _wrapper(path, options)
        try:
            connection.ensure_connection()
            # What transaction.atomic() runs on SQLite: BEGIN, or BEGIN <transaction_mode>.
            connection._start_transaction_under_autocommit()
            with connection.cursor() as cursor:
                if name == "a":
                    cursor.execute("SELECT count(*) FROM t")
                    a_read.set()
                    # Deferred, B takes the lock meanwhile; immediate, B waits for A's
                    # commit, so A goes on after a second.
                    b_holds.wait(1)
                    cursor.execute("INSERT INTO t VALUES (1)")
                else:
                    a_read.wait(5)
                    cursor.execute("INSERT INTO t VALUES (2)")
                    b_holds.set()
                    threading.Event().wait(0.3)  # the write lock held a moment
            connection.commit()
            outcome[name] = "committed"
        except OperationalError as exc:
            outcome[name] = str(exc)
            b_holds.set()
        finally:
            connection.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    return [outcome.get("a", "hung"), outcome.get("b", "hung")]


@pytest.fixture(autouse=True)
def _own_database(django_db_blocker):
    # A scratch SQLite file of the test's own, not the test database.
    with django_db_blocker.unblock():
        yield


def test_with_the_project_s_options_the_second_writer_waits_its_turn(tmp_path):
    assert _two_writers(tmp_path / "db.sqlite3", dict(SQLITE_OPTIONS)) == [
        "committed",
        "committed",
    ]


@pytest.mark.parametrize("journal", ["DELETE", "WAL"])
def test_deferred_transactions_are_refused_at_once(tmp_path, journal):
    # What the options prevent: the same two writers in SQLite's default mode.
    options = {"timeout": 20, "init_command": f"PRAGMA journal_mode={journal}"}
    seen = _two_writers(tmp_path / "db.sqlite3", options)
    assert "database is locked" in " ".join(seen), seen
