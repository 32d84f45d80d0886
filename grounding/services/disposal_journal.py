"""The disposal journal: every disposal, recorded outside the database as well, so a
database restored to a point before it can have it applied again before it serves
(docs/architecture.md "Restoring from a backup").

A JSON-lines file (`GROUNDING_DISPOSAL_JOURNAL`, off when empty) on storage that
outlives the database's host. Each disposal appends two lines, each fsynced:

- `"state": "intent"`, inside the disposal's transaction, after everything else it
  does and before its commit: a journal that cannot be written refuses the disposal
  (`disposal_journal_unavailable`, 503) and nothing is disposed unrecorded;
- `"state": "committed"`, after the commit (`transaction.on_commit`).

A process that dies between the commit and the second line leaves an intent alone:
`reapply_disposals` confirms it when the database holds the disposal, and otherwise
names it `unconfirmed` (the commit may not have happened) and applies it only when
told to (`--apply-unconfirmed`). A line carries what re-applying needs, references
only, never text: the Dimension, the grounding id, the disposal's id, time and
resulting revision, who disposed it, the receipt and policy refs.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import router, transaction
from django.utils import timezone

from common.kernel.refusals import Refusal
from grounding.choices import RecordState
from grounding.models import Disposal, GroundingLink

logger = logging.getLogger("grounding.disposal_journal")

INTENT, COMMITTED = "intent", "committed"


def journal_path() -> str:
    """The journal this process appends to ('' when there is none)."""
    return getattr(settings, "GROUNDING_DISPOSAL_JOURNAL", "") or ""


def record(disposal: Disposal, link: GroundingLink, actor_ref: str) -> None:
    """Journal a disposal from inside its transaction: its intent now, its commit
    after the commit (module docstring)."""
    path = journal_path()
    if not path:
        return
    entry = {
        "disposal_id": str(disposal.disposal_id),
        "dimension": link.dimension.name,
        "grounding_id": str(link.grounding_id),
        "revision": link.revision,
        "disposed_at": disposal.recorded_at.isoformat(),
        "actor_ref": actor_ref,
        "receipt_ref": disposal.receipt_ref,
        "policy_ref": disposal.policy_ref,
    }
    try:
        append(path, {**entry, "state": INTENT})
    except OSError as exc:
        logger.error("disposal journal %s cannot be written: %s", path, exc)
        raise Refusal(
            "disposal_journal_unavailable",
            "The disposal journal cannot be written; nothing was disposed. Retry later.",
        ) from exc

    def committed() -> None:
        try:
            append(path, {**entry, "state": COMMITTED})
        except OSError:
            # The intent stands: reapply_disposals confirms it against the database.
            logger.exception("disposal %s committed, not journaled so", entry["disposal_id"])

    transaction.on_commit(committed)


def append(path: str, entry: dict[str, Any]) -> None:
    """One line, appended under an exclusive lock and fsynced (several processes, and
    several hosts on one shared volume, append to one file). A line a crash tore is
    ended first, so the next one is whole."""
    line = json.dumps({**entry, "written_at": timezone.now().isoformat()}, sort_keys=True)
    created = not os.path.exists(path)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        os.write(fd, (("\n" if torn else "") + line + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    if created:  # the new file's name survives a crash too
        directory = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


@dataclass
class Journal:
    """The journal's disposals by id: `committed` those with a committed line,
    `intents` those with an intent only; `torn` lines that are not JSON."""

    committed: dict[str, dict] = field(default_factory=dict)
    intents: dict[str, dict] = field(default_factory=dict)
    torn: int = 0

    def add(self, entry: dict) -> None:
        disposal_id = entry["disposal_id"]
        if entry.get("state") == COMMITTED:
            self.committed[disposal_id] = entry
            self.intents.pop(disposal_id, None)
        elif disposal_id not in self.committed:
            self.intents[disposal_id] = entry


def lines(path: str, start: int = 0) -> tuple[Iterator[dict | None], int]:
    """The entries of the whole lines from byte `start` (None for a torn one), and
    the offset after the last whole line."""
    with open(path, "rb") as handle:
        handle.seek(start)
        data = handle.read()
    end = data.rfind(b"\n") + 1
    return (_entry(line) for line in data[:end].splitlines() if line.strip()), start + end


def _entry(line: bytes) -> dict | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("disposal_id"), str):
        return None
    return entry


def read(paths: Iterable[str]) -> Journal:
    journal = Journal()
    for path in paths:
        if not Path(path).exists():
            continue
        entries, end = lines(path)
        for entry in entries:
            if entry is None:
                journal.torn += 1
            else:
                journal.add(entry)
        if end < Path(path).stat().st_size:  # a last line a crash left unended
            journal.torn += 1
    return journal


def lacking(entries: Iterable[dict]) -> list[dict]:
    """The entries whose link the database holds and has not disposed (a link it does
    not hold was registered after the point it was restored to: nothing to serve)."""
    entries = list(entries)
    # The primary's answer: a lagging replica would call a disposal just made lacking.
    links = GroundingLink.objects.using(router.db_for_write(GroundingLink))
    out: list[dict] = []
    for start in range(0, len(entries), 1000):
        chunk = entries[start : start + 1000]
        live = set(
            links.filter(grounding_id__in=[e["grounding_id"] for e in chunk])
            .exclude(record_state=RecordState.DISPOSED)
            .values_list("grounding_id", flat=True)
        )
        out += [e for e in chunk if uuid.UUID(e["grounding_id"]) in live]
    return out


# -- readiness: the journal's committed disposals are all in the database

_read_to: dict[str, int] = {}  # journal path: the offset read and found applied
_read_lock = threading.Lock()


def readiness() -> str | None:
    """'ok' when the database holds every committed disposal of the journal,
    'pending' while one is not applied (a restore: run reapply_disposals), None with
    no journal. Lines once found applied are not read again by this process (a
    database is restored under new processes)."""
    path = journal_path()
    if not path:
        return None
    with _read_lock:
        try:
            size = os.path.getsize(path)
        except FileNotFoundError:
            return "ok"
        start = _read_to.get(path, 0)
        if start >= size:
            return "ok"
        entries, end = lines(path, start)
        journal = Journal()
        for entry in entries:
            if entry is not None:
                journal.add(entry)
        if lacking(journal.committed.values()):
            return "pending"
        _read_to[path] = end
        return "ok"
