"""The sequencer service and the delivery workers outlive their database sessions: their
backends terminated (`pg_terminate_backend`, what a leader change does to every
session), they log the loss, back off, reconnect by themselves and carry on: later
writes are integrated and their events delivered. Two sequencers killed again and
again still integrate each write once: one holds the log's lock at a time, in every
transaction, on whichever session it has.

Real parts: `manage.py run_sequencer` and `manage.py deliver_events` as processes on the
test run's PostgreSQL, a real webhook receiver.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from io import StringIO
from pathlib import Path

import psycopg
import pytest
from django.core.management import call_command

from feed.models import Delivery
from tests import factories
from tests.conftest import requires_postgres
from tests.feed.conftest import subscribe
from tests.feed.receiver import Receiver
from tests.ops.live import PROJECT, database_url, server_env, superuser, wait_for
from transparency.models import Leaf, PendingWrite
from transparency.sequencer import LOCK_NAMESPACE

pytestmark = [requires_postgres, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

# The sequencer's advisory lock as pg_locks shows it: (classid, objid) = (namespace, 0),
# in this database (advisory locks are per database; others may run sequencers too).
_LOCK_HOLDERS = (
    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND classid = %s AND objid = 0 AND objsubid = 2 "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


@contextmanager
def service(log: Path, name: str, *command: str, **env: str) -> Iterator[subprocess.Popen]:
    """A manage.py command as a process of its own, its sessions named `name`."""
    url = f"{database_url()}?application_name={name}"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "manage.py", *command],
            cwd=PROJECT,
            env=server_env(url, DJANGO_LOG_LEVEL="WARNING", DJANGO_LOG_FORMAT="text", **env),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            yield proc
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)


def terminate(conn: psycopg.Connection, names: list[str]) -> int:
    """Terminate every session of these names; how many there were."""
    rows = conn.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE application_name = ANY(%s) AND backend_type = 'client backend'",
        (names,),
    ).fetchall()
    return len(rows)


def terminate_pids(conn: psycopg.Connection, pids: set[int]) -> set[int]:
    """Terminate these backends; the ones that were still there to terminate."""
    rows = conn.execute(
        "SELECT pid FROM unnest(%s::int[]) AS pid WHERE pg_terminate_backend(pid)",
        (sorted(pids),),
    ).fetchall()
    return {pid for (pid,) in rows}


def sessions(conn: psycopg.Connection, names: list[str]) -> int:
    return len(session_pids(conn, names))


def session_pids(conn: psycopg.Connection, names: list[str]) -> set[int]:
    """The client backends of these names. A terminated backend lingers in
    pg_stat_activity for a moment after pg_terminate_backend: callers that kill
    again and again tell a new session from a dying one by its pid."""
    rows = conn.execute(
        "SELECT pid FROM pg_stat_activity "
        "WHERE application_name = ANY(%s) AND backend_type = 'client backend'",
        (names,),
    ).fetchall()
    return {pid for (pid,) in rows}


_LOST = re.compile(r"(\S+): database connection lost")
_BACK = re.compile(r"(\S+): reconnected after")


def all_back(log: str) -> bool:
    """Every service thread (`the sequencer:`, `delivery deliver-1:`) that logged a lost
    connection logged its reconnect after it."""
    last_lost: dict[str, int] = {}
    last_back: dict[str, int] = {}
    for n, line in enumerate(log.splitlines()):
        if found := _LOST.search(line):
            last_lost[found.group(1)] = n
        if found := _BACK.search(line):
            last_back[found.group(1)] = n
    return all(last_back.get(name, -1) > n for name, n in last_lost.items())


def integrated(link) -> bool:
    return Leaf.objects.filter(grounding_id=link.pk, index__isnull=False).exists()


def test_the_sequencer_and_the_workers_reconnect_and_carry_on(world, tmp_path, settings):
    settings.GROUNDING_WEBHOOK_ALLOW_PRIVATE = True  # the receiver: loopback, over http
    run = uuid.uuid4().hex[:8]
    seq, dlv = f"seq-{run}", f"dlv-{run}"
    with (
        Receiver() as receiver,
        superuser() as conn,
        service(tmp_path / "seq.log", seq, "run_sequencer", "--interval", "0.05"),
        service(
            tmp_path / "dlv.log",
            dlv,
            "deliver_events",
            "--threads",
            "2",
            "--poll",
            "0.1",
            GROUNDING_WEBHOOK_ALLOW_PRIVATE="1",
        ),
    ):
        subscribe(world, receiver.url)
        before = factories.register_link(
            world.curator, world.dimension, world.profile, world.passage
        )
        wait_for(lambda: integrated(before), what="the first write integrated")
        wait_for(lambda: len(receiver.received) == 1, what="its event delivered")
        # ...and its delivery recorded: killed between the POST and that commit, the
        # worker would send it again (at least once, under the same event id).
        wait_for(
            lambda: Delivery.objects.filter(state="delivered").count() == 1,
            what="its delivery recorded",
        )
        wait_for(lambda: sessions(conn, [seq]) and sessions(conn, [dlv]), what="their sessions")
        killed = terminate(conn, [seq, dlv])
        assert killed >= 2
        after = factories.register_link(
            world.curator, world.dimension, world.profile, world.passage
        )
        wait_for(lambda: integrated(after), what="a write after the kill integrated")
        wait_for(lambda: len(receiver.received) == 2, what="its event delivered")
        wait_for(lambda: sessions(conn, [seq]) and sessions(conn, [dlv]), what="new sessions")
        # Every thread that lost its session says when it is back (a delivery thread
        # with nothing to deliver may still be in its backoff when the other delivered).
        for log in (tmp_path / "seq.log", tmp_path / "dlv.log"):
            wait_for(lambda log=log: all_back(log.read_text(errors="replace")),
                     what=f"every loss in {log.name} followed by its reconnect")  # fmt: skip
    subjects = [json.loads(r.body)["subject"] for r in receiver.received]
    assert subjects == [str(before.pk), str(after.pk)]
    assert Delivery.objects.filter(state="delivered").count() == 2
    seq_log = (tmp_path / "seq.log").read_text(errors="replace")
    dlv_log = (tmp_path / "dlv.log").read_text(errors="replace")
    # Each noticed the loss (unless it was between sessions) and said when it was back.
    for text in (seq_log, dlv_log):
        assert all_back(text), text[-3000:]
    assert "database connection lost" in seq_log + dlv_log
    assert "Traceback" not in seq_log + dlv_log


def test_two_sequencers_killed_again_and_again_integrate_each_write_once(world, tmp_path):
    run = uuid.uuid4().hex[:8]
    names = [f"seq-a-{run}", f"seq-b-{run}"]
    most_holders, writes, killed = 0, [], set()
    done = threading.Event()

    def watch_the_lock() -> None:
        nonlocal most_holders
        with superuser() as watcher:
            while not done.is_set():
                holders = watcher.execute(_LOCK_HOLDERS, (LOCK_NAMESPACE,)).fetchone()[0]
                most_holders = max(most_holders, holders)

    watcher = threading.Thread(target=watch_the_lock)
    with (
        superuser() as conn,
        service(tmp_path / "a.log", names[0], "run_sequencer", "--interval", "0.01"),
        service(tmp_path / "b.log", names[1], "run_sequencer", "--interval", "0.01"),
    ):
        watcher.start()
        try:
            for _ in range(6):
                writes.append(
                    factories.register_link(
                        world.curator, world.dimension, world.profile, world.passage
                    )
                )
                # A session not killed before (a dying one may still be listed), killed;
                # retried if it went away by itself between the look and the kill.
                killed |= wait_for(
                    lambda before=frozenset(killed): terminate_pids(
                        conn, session_pids(conn, names) - before
                    ),
                    what="a new sequencer session, terminated",
                )
            wait_for(lambda: all(integrated(w) for w in writes), what="every write integrated")
            wait_for(lambda: not PendingWrite.objects.exists(), what="the queue drained")
        finally:
            done.set()
            watcher.join(timeout=10)
    assert len(killed) >= 6
    assert most_holders <= 1  # never held by two at once
    indexes = sorted(Leaf.objects.filter(log__dimension=world.dimension).values_list("index"))
    assert [i for (i,) in indexes] == list(range(len(indexes)))
    # Each write's event once: the registration and its fixture rows, no leaf twice.
    for link in writes:
        assert Leaf.objects.filter(grounding_id=link.pk).count() == 1
    out = StringIO()
    call_command("verify_log", "--dimension", world.dimension.name, "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["ok"] is True and report["problems"] == [] and report["pending"] == 0
