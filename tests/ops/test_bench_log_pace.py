"""The log_pace step's arithmetic over its samples (bench/workloads/log_pace.py): the
writing window, its thirds and the lag from commit to checkpoint. No database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bench.workloads.log_pace import _queue_lag, _window

T0 = datetime(2026, 12, 6, 16, 0, tzinfo=UTC)


def _samples(rows):
    """(seconds after T0, leaves in the logs, events queued)."""
    return [(T0 + timedelta(seconds=s), i, q) for s, i, q in rows]


def test_a_sequencer_keeping_pace_integrates_what_was_written_in_each_third():
    # 1,000 links committed each second from t=1; each integrated one second later.
    rows = [(0, 500, 0)]
    rows += [(s, 500 + (s - 1) * 1000, 1000) for s in range(1, 7)]
    rows += [(7, 500 + 6000, 0)]
    got = _window(_samples(rows), 6000)
    # The window: the sample before the first write (t=0) to the first with all 6,000 (t=6).
    assert got["window_seconds"] == 6.0
    assert got["written_per_s"] == 1000
    assert got["integrated_per_s"] == 833  # 5,000 integrated by t=6
    assert [r["written_per_s"] for r in got["rounds"]] == [1000, 1000, 1000]
    assert [r["integrated_per_s"] for r in got["rounds"]] == [500, 1000, 1000]
    assert got["drained_after_s"] == 1.0
    assert got["queued"] == {"p50": 1000, "p99": 1000, "max": 1000}


def test_the_lag_runs_from_the_sample_that_saw_a_write_to_the_one_that_saw_it_signed():
    rows = [(0, 0, 0), (1, 0, 2), (2, 1, 1), (3, 1, 1), (4, 2, 0)]
    got = _queue_lag(_samples(rows))
    # Two writes seen at t=1: the first signed at t=2, the second at t=4.
    assert (got["links"], got["p50_ms"], got["max_ms"]) == (2, 1000.0, 3000.0)
