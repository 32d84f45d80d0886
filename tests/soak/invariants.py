"""The invariants of issue 27, as pure functions of what the clients were answered
(`load.Op`) and what the database holds (`Stored`). Each returns a `Check`: its name,
whether it held, and the figures or the first offenders.

- nothing lost: every link a 2xx answer named is stored, at the revision answered;
- every bulk all or nothing, and no duplicate links per key: an op's links (by their
  `owner_ref` marker) are 0 or all of its items, and exactly all once it got a 2xx;
- history rows equal revisions for every link;
- a committed write never answered 5xx: an attempt answered 5xx (or not at all) whose
  request id has an `applied` audit row is allowed only when the op's retry got the
  replay of that very write (`Idempotent-Replayed: true`, the same links): a backend
  killed during COMMIT, or a worker killed after it, leaves the outcome in doubt,
  and only the replay settles it; every successful write op committed exactly once
  (one of its attempts has `applied` rows: the final one, or, for a replay, the
  earlier one it replays);
- one audit outcome per request id;
- the race: exactly one 200 and the rest 412, revision +1, one history row more;
- throttles: at most the limit accepted per window.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tests.soak.load import Op

WRITES = ("register", "bulk", "patch", "assess")
CREATES = ("register", "bulk")
SHOWN = 5  # offenders shown per broken check


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"   [{'ok' if self.ok else 'BROKEN'}] {self.name}: {self.detail}"


@dataclass
class Stored:
    """What the database holds of the soak (tests/soak/stored.py reads it)."""

    links: dict[str, tuple[str, int]] = field(default_factory=dict)  # id → (owner_ref, rev)
    history: dict[str, int] = field(default_factory=dict)  # id → history rows
    applied: dict[str, list[str]] = field(default_factory=dict)  # request id → link ids
    outcomes: dict[str, set[str]] = field(default_factory=dict)  # request id → outcomes

    def by_owner(self) -> dict[str, list[str]]:
        owners: dict[str, list[str]] = {}
        for grounding_id, (owner_ref, _) in self.links.items():
            owners.setdefault(owner_ref, []).append(grounding_id)
        return owners


def _check(name: str, offenders: list[str], figures: str) -> Check:
    if offenders:
        shown = "; ".join(offenders[:SHOWN])
        more = f" (+{len(offenders) - SHOWN} more)" if len(offenders) > SHOWN else ""
        return Check(name, False, f"{len(offenders)} offender(s): {shown}{more}")
    return Check(name, True, figures)


def every_write_answered_2xx(ops: list[Op]) -> Check:
    """Retried until 2xx: a write of the soak's own links has no reason to be refused."""
    writes = [op for op in ops if op.kind in WRITES]
    offenders = [
        f"{op.kind} {op.key} ended {op.status} {op.final.code if op.final else ''} "
        f"after {len(op.attempts)} attempt(s)"
        for op in writes
        if not op.ok
    ]
    return _check("every write retried to a 2xx", offenders, f"{len(writes)} writes, all 2xx")


def nothing_lost(ops: list[Op], stored: Stored) -> Check:
    offenders = []
    answered: dict[str, int] = {}
    for op in ops:
        if not op.ok:
            continue
        for grounding_id in op.ids or ([op.grounding_id] if op.grounding_id else []):
            if grounding_id not in stored.links:
                offenders.append(f"{op.kind} {op.key}: link {grounding_id} answered, not stored")
                continue
            revision = op.revision or 1
            if op.kind in CREATES:
                revision = 1
            answered[grounding_id] = max(answered.get(grounding_id, 0), revision)
    for grounding_id, revision in answered.items():
        if grounding_id in stored.links and stored.links[grounding_id][1] != revision:
            offenders.append(
                f"link {grounding_id}: last answered revision {revision}, stored "
                f"{stored.links[grounding_id][1]}"
            )
    return _check(
        "nothing lost (every answered link stored, at the last revision answered)",
        offenders,
        f"{len(answered)} links answered, each stored at its last answered revision",
    )


def all_or_nothing_and_no_duplicates(ops: list[Op], stored: Stored) -> Check:
    owners = stored.by_owner()
    offenders = []
    bulks = 0
    for op in ops:
        if op.kind not in CREATES:
            continue
        bulks += op.kind == "bulk"
        found = sorted(owners.get(op.owner_ref, []))
        if len(found) not in (0, op.items):
            offenders.append(f"{op.kind} {op.key}: {len(found)} of {op.items} links stored")
        elif op.ok and found != sorted(op.ids):
            offenders.append(
                f"{op.kind} {op.key}: answered {len(op.ids)} link(s), stored {len(found)} "
                f"under its key"
            )
    creates = [op for op in ops if op.kind in CREATES]
    return _check(
        "every bulk all or nothing, links per key = items (no duplicates)",
        offenders,
        f"{len(creates)} registrations ({bulks} bulks, "
        f"{sum(op.items for op in creates if op.kind == 'bulk')} bulk items): "
        "each stored exactly once",
    )


def history_equals_revisions(stored: Stored) -> Check:
    offenders = [
        f"link {grounding_id}: revision {revision}, {stored.history.get(grounding_id, 0)} "
        "history rows"
        for grounding_id, (_, revision) in stored.links.items()
        if stored.history.get(grounding_id, 0) != revision
    ]
    return _check(
        "history rows = revisions for every link",
        offenders,
        f"{len(stored.links)} links, {sum(stored.history.values())} history rows",
    )


def committed_writes_answered_2xx(ops: list[Op], stored: Stored) -> tuple[Check, int]:
    """The check, and how many writes were committed though an attempt got no 2xx
    (each settled by its replay)."""
    offenders = []
    settled = 0
    for op in ops:
        if op.kind not in WRITES or op.final is None:
            continue
        committed = [a for a in op.attempts if a.request_id in stored.applied]
        for attempt in committed:
            if 200 <= attempt.status < 300:
                continue
            replay = op.final
            same = op.kind not in CREATES or sorted(stored.applied[attempt.request_id]) == sorted(
                op.ids
            )
            if replay is not attempt and replay.replayed and op.ok and same:
                settled += 1
            else:
                offenders.append(
                    f"{op.kind} {op.key}: request {attempt.request_id} committed, answered "
                    f"{attempt.status or 'no answer'} {attempt.code}, then "
                    f"{'replayed' if replay.replayed else 'not replayed'} {replay.status}"
                )
        if op.ok and len(committed) != 1:
            offenders.append(
                f"{op.kind} {op.key}: answered {op.status}, {len(committed)} attempts committed"
            )
        if op.ok and not op.final.replayed and op.final not in committed:
            offenders.append(f"{op.kind} {op.key}: answered {op.status}, nothing committed")
    writes = sum(op.kind in WRITES for op in ops)
    return (
        _check(
            "a committed write is never answered 5xx (unless its retry got the replay)",
            offenders,
            f"{writes} writes each committed once; {settled} committed without a 2xx and "
            "settled by the replay",
        ),
        settled,
    )


def one_outcome_per_request(stored: Stored) -> Check:
    offenders = [
        f"request {request_id}: {sorted(outcomes)}"
        for request_id, outcomes in stored.outcomes.items()
        if len(outcomes) > 1
    ]
    return _check(
        "one audit outcome per request id",
        offenders,
        f"{len(stored.outcomes)} request ids audited, one outcome each",
    )


def no_5xx(ops: list[Op]) -> Check:
    """Without faults, no request is answered 5xx (or not at all)."""
    offenders = [
        f"{op.kind} {op.key or ''} {a.request_id}: {a.status or a.error} {a.code}"
        for op in ops
        for a in op.attempts
        if a.status == 0 or a.status >= 500
    ]
    return _check("no 5xx without faults", offenders, "none")


def race(
    statuses: list[int], before: tuple[int, int], after: tuple[int, int], writers: int
) -> Check:
    """`before`/`after`: the link's (revision, history rows) around the race."""
    counted = Counter(statuses)
    offenders = []
    if counted != Counter({200: 1, 412: writers - 1}):
        offenders.append(f"statuses {dict(sorted(counted.items()))}")
    if after != (before[0] + 1, before[1] + 1):
        offenders.append(f"(revision, history rows) {before} → {after}")
    return _check(
        f"{writers} writers on one revision: one 200, {writers - 1} × 412",
        offenders,
        f"statuses {dict(sorted(counted.items()))}; revision {before[0]} → {after[0]}, "
        f"history rows {before[1]} → {after[1]}",
    )


def throttled(accepted: int, refused: int, limit: int, windows: int, other: int) -> Check:
    """`windows`: how many of the rate's windows the drill's requests fell into (from
    the first request sent to the last answer); `other`: answers neither 2xx nor 429."""
    offenders = []
    if accepted > limit * windows:
        offenders.append(f"{accepted} accepted in {windows} window(s) of {limit}")
    if windows == 1 and accepted < limit:
        offenders.append(f"only {accepted} accepted of a limit of {limit}")
    if other:
        offenders.append(f"{other} answers neither 2xx nor 429")
    return _check(
        "throttle: at most the limit accepted per window",
        offenders,
        f"{accepted} accepted, {refused} × 429, limit {limit} per window, {windows} window(s)",
    )
