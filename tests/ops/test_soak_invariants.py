"""The soak's invariant checks (tests/soak/invariants.py) on hand-made answers and
database contents: each holds on a clean run and names the offender of a broken one.
`make soak` runs them against real servers; these keep the logic itself honest."""

from __future__ import annotations

from tests.soak import invariants
from tests.soak.invariants import Stored
from tests.soak.load import Attempt, Op, worth_retrying


def _op(kind: str, *attempts: Attempt, items: int = 1, ids=(), revision: int = 1, key="k1"):
    op = Op("t", kind, key, owner_ref=f"role:soak-{key}", items=items)
    op.attempts = list(attempts)
    op.ids = list(ids)
    op.revision = revision
    return op


def _stored(links: dict, applied: dict, history: dict | None = None) -> Stored:
    return Stored(
        links=links,
        history=history if history is not None else {g: rev for g, (_, rev) in links.items()},
        applied=applied,
        outcomes={request_id: {"applied"} for request_id in applied},
    )


def test_a_write_committed_though_answered_503_holds_only_when_its_retry_got_the_replay():
    first, replay = Attempt("r1", 503, code="database_unavailable"), Attempt("r2", 201, True)
    stored = _stored({"g1": ("role:soak-k1", 1)}, {"r1": ["g1"]})

    check, settled = invariants.committed_writes_answered_2xx(
        [_op("register", first, replay, ids=["g1"])], stored
    )
    assert check.ok and settled == 1

    rerun = Attempt("r2", 201)  # the retry ran the write again instead of replaying it
    check, settled = invariants.committed_writes_answered_2xx(
        [_op("register", first, rerun, ids=["g2"])],
        _stored(
            {"g1": ("role:soak-k1", 1), "g2": ("role:soak-k1", 1)}, {"r1": ["g1"], "r2": ["g2"]}
        ),
    )
    assert not check.ok and settled == 0
    assert "request r1 committed, answered 503 database_unavailable, then not replayed 201" in (
        check.detail
    )
    assert "2 attempts committed" in check.detail


def test_a_committed_write_whose_retry_gave_up_is_broken():
    lost = Attempt("r1", 0, error="ConnectionError")
    check, _ = invariants.committed_writes_answered_2xx(
        [_op("register", lost, Attempt("r2", 503))],
        _stored({"g1": ("role:soak-k1", 1)}, {"r1": ["g1"]}),
    )
    assert not check.ok
    assert "request r1 committed, answered no answer" in check.detail


def test_a_2xx_write_without_an_applied_audit_row_is_broken():
    check, _ = invariants.committed_writes_answered_2xx(
        [_op("register", Attempt("r1", 201), ids=["g1"])], _stored({"g1": ("role:soak-k1", 1)}, {})
    )
    assert not check.ok and "answered 201, 0 attempts committed" in check.detail


def test_a_bulk_stored_in_part_or_twice_is_broken_and_a_whole_one_holds():
    whole = _op("bulk", Attempt("r1", 201), items=3, ids=["a", "b", "c"])
    owner = "role:soak-k1"
    links = {g: (owner, 1) for g in "abc"}
    assert invariants.all_or_nothing_and_no_duplicates([whole], _stored(links, {})).ok

    partial = invariants.all_or_nothing_and_no_duplicates(
        [whole], _stored({"a": (owner, 1), "b": (owner, 1)}, {})
    )
    assert not partial.ok and "bulk k1: 2 of 3 links stored" in partial.detail

    twice = _op("register", Attempt("r1", 201), ids=["a"])
    doubled = invariants.all_or_nothing_and_no_duplicates(
        [twice], _stored({"a": (owner, 1), "b": (owner, 1)}, {})
    )
    assert not doubled.ok and "register k1: 2 of 1 links stored" in doubled.detail


def test_history_rows_must_equal_the_revision_of_every_link():
    stored = _stored({"g1": ("o", 3), "g2": ("o", 1)}, {}, history={"g1": 2, "g2": 1})
    check = invariants.history_equals_revisions(stored)
    assert not check.ok and check.detail == "1 offender(s): link g1: revision 3, 2 history rows"
    assert invariants.history_equals_revisions(_stored({"g1": ("o", 3)}, {})).ok


def test_nothing_lost_needs_every_answered_link_at_its_last_answered_revision():
    register = _op("register", Attempt("r1", 201), ids=["g1"])
    patch = _op("patch", Attempt("r2", 200), ids=["g1"], revision=2, key="k2")
    assert invariants.nothing_lost([register, patch], _stored({"g1": ("o", 2)}, {})).ok

    behind = invariants.nothing_lost([register, patch], _stored({"g1": ("o", 1)}, {}))
    assert not behind.ok and "last answered revision 2, stored 1" in behind.detail
    missing = invariants.nothing_lost([register], _stored({}, {}))
    assert not missing.ok and "link g1 answered, not stored" in missing.detail


def test_a_request_id_with_both_outcomes_is_broken():
    stored = Stored(outcomes={"r1": {"applied"}, "r2": {"applied", "refused"}})
    check = invariants.one_outcome_per_request(stored)
    assert not check.ok and check.detail == "1 offender(s): request r2: ['applied', 'refused']"


def test_the_race_needs_one_200_the_rest_412_and_exactly_one_revision_more():
    statuses = [200] + [412] * 31
    assert invariants.race(statuses, (1, 1), (2, 2), 32).ok
    lost = invariants.race([200, 200] + [412] * 30, (1, 1), (3, 3), 32)
    assert not lost.ok
    assert "statuses {200: 2, 412: 30}" in lost.detail and "(1, 1) → (3, 3)" in lost.detail


def test_a_throttle_accepting_more_than_its_limit_per_window_is_broken():
    assert invariants.throttled(20, 40, limit=20, windows=1, other=0).ok
    over = invariants.throttled(21, 39, limit=20, windows=1, other=0)
    assert not over.ok and "21 accepted in 1 window(s) of 20" in over.detail
    # Two windows touched: up to twice the limit, and fewer than the limit is no fault.
    assert invariants.throttled(30, 30, limit=20, windows=2, other=0).ok
    assert not invariants.throttled(20, 39, limit=20, windows=1, other=1).ok


def test_a_write_not_ended_2xx_and_a_5xx_without_faults_are_broken():
    ended = _op("register", Attempt("r1", 412, code="revision_mismatch"))
    check = invariants.every_write_answered_2xx([ended])
    assert not check.ok and "register k1 ended 412 revision_mismatch after 1 attempt(s)" in (
        check.detail
    )
    faults = invariants.no_5xx([_op("read", Attempt("r1", 503), key=None)])
    assert not faults.ok


def test_a_write_is_retried_only_with_a_key_and_only_on_5xx_no_answer_429_or_in_progress():
    for status, code in ((0, ""), (503, "database_unavailable"), (429, "throttled")):
        assert worth_retrying(Attempt("r", status, code=code), is_write=True, keyed=True)
        assert not worth_retrying(Attempt("r", status, code=code), is_write=True, keyed=False)
        assert worth_retrying(Attempt("r", status, code=code), is_write=False, keyed=False)
    in_progress = Attempt("r", 409, code="idempotency_in_progress")
    assert worth_retrying(in_progress, is_write=True, keyed=True)
    for status, code in ((201, ""), (412, "revision_mismatch"), (409, "assessment_input_mismatch")):
        assert not worth_retrying(Attempt("r", status, code=code), is_write=True, keyed=True)
