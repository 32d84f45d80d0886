"""Does the transparency log keep up with the writers, as production runs it (#37)?

The sequencer is `manage.py run_sequencer` in its own process (no sequencer thread
in any writer's process: bench/settings.py sets GROUNDING_LOG_SEQUENCER=service),
and two bulk writers write as fast as they can: by default two clients each posting
bulk registrations of 1,000 links, one after another, to gunicorn with the
production image's defaults (3 workers, 4 threads) and the production settings
(BENCH_PACE_TRANSPORT=http); or two `bench.writer` processes calling the bulk service
(=service). Meanwhile this process samples, every 0.1 s, how many leaves the logs
hold and how many logged events are queued (committed, not yet integrated): written
= integrated + queued.

Figures: links written per second over the writing window, leaves integrated per
second over the same window (`log_keeps_up` divides them; its rounds are the
window's thirds, so a sequencer falling further behind shows as a falling third),
the queue's size, the checkpoint lag of every leaf written (its covering
checkpoint's signing time minus its write's time), and, for context, the sequencer
alone on a backlog in this process (`integrate()`, nothing else running).
BENCH_PACE_LINKS [100000], BENCH_PACE_TRANSPORT [http], BENCH_PACE_ALONE [10000]
"""

from __future__ import annotations

import bisect
import itertools
import os
import threading
import time

from bench import app, generate
from bench.workloads.common import BATCH, env_int, ms, percentile, raw_conn, writers
from bench.workloads.serving import _free_port, _loadgen, gunicorn
from bench.workloads.transparency import sequencer_service

BULK = "/api/v1/groundings/bulk/"
SAMPLE_SECONDS = 0.1
_SAMPLE = (
    "SELECT clock_timestamp(), (SELECT coalesce(sum(size), 0) FROM transparency_log), "
    "(SELECT coalesce(sum(jsonb_array_length(events)), 0) FROM transparency_pendingwrite)"
)


def log_pace(tokens: dict) -> dict:
    from transparency import sequencer

    links = max(2 * BATCH, env_int("BENCH_PACE_LINKS", 100_000))
    transport = os.environ.get("BENCH_PACE_TRANSPORT", "http")
    out: dict = {"transport": "HTTP bulk requests to gunicorn (3 workers × 4 threads)"
                 if transport == "http" else "bulk service in 2 writer processes",
                 "links": links, "batch_size": BATCH}  # fmt: skip
    started = time.perf_counter()
    out["backlog"] = {"leaves": sequencer.integrate(),
                      "seconds": round(time.perf_counter() - started, 2)}  # fmt: skip
    out["sequencer_alone"] = _sequencer_alone()
    samples: list[tuple[float, int, int]] = []
    stop = threading.Event()
    sampler = threading.Thread(target=_sample, args=(samples, stop), daemon=True)
    with sequencer_service():
        sampler.start()
        try:
            if transport == "http":
                out["http"] = _over_http(tokens["curator"], links)
            else:
                writers("register", count=2, batches=links // BATCH // 2, batch_size=BATCH,
                        offset=60_000_000)  # fmt: skip
            _drained(samples)
        finally:
            stop.set()
            sampler.join()
    out.update(_window(samples, links))
    out.pop("since"), out.pop("until")
    out["checkpoint_lag"] = _queue_lag(samples)
    out["checkpoint_lag_from_event"] = _lag(samples[0][0], samples[-1][0])
    return out


def _sequencer_alone() -> dict:
    """BENCH_PACE_ALONE links registered in bulk with no sequencer running, then
    integrated by `integrate()` in this process: the sequencer's own pace."""
    from transparency import sequencer

    count = max(BATCH, env_int("BENCH_PACE_ALONE", 10_000))
    curator = app.curator()
    for start in range(0, count, BATCH):
        items = [generate.register_payload(70_000_000 + start + i) for i in range(BATCH)]
        app.register_many(actor=curator, items=items)
    started = time.perf_counter()
    leaves = sequencer.integrate()
    seconds = time.perf_counter() - started
    return {"leaves": leaves, "seconds": round(seconds, 2), "leaves_per_s": round(leaves / seconds)}


def _over_http(token: str, links: int) -> dict:
    """Two clients posting distinct bulk registrations of BATCH links, back to back."""
    from bench.workloads.serving import _summary

    requests = links // BATCH
    bodies = [
        {"items": [generate.register_payload(60_000_000 + r * BATCH + i) for i in range(BATCH)]}
        for r in range(requests)
    ]
    port = _free_port()
    with gunicorn([port], 3, 4):
        done = _loadgen([port], BULK, token, bodies, clients=2, requests=requests, seconds=1800)
    summary = _summary([done])
    if summary["statuses"].get("201", 0) != requests:
        raise RuntimeError(f"bulk requests failed: {summary['statuses']}")
    return {k: summary[k] for k in ("requests", "p50_ms", "p99_ms", "statuses")}


def _sample(samples: list, stop: threading.Event) -> None:
    with raw_conn() as conn:
        conn.autocommit = True
        while not stop.is_set():
            at, integrated, queued = conn.execute(_SAMPLE).fetchone()
            samples.append((at, int(integrated), int(queued)))
            stop.wait(SAMPLE_SECONDS)


def _drained(samples: list, timeout: float = 600) -> None:
    """Until the queue is empty (the writers have returned)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if samples and samples[-1][2] == 0:
            return
        time.sleep(0.25)
    raise RuntimeError("the sequencer did not integrate the writes within the timeout")


def _window(samples: list, links: int) -> dict:
    """The writing window (the first sample with a write to the first with all of them
    written), its rates, its thirds as rounds, and the queue."""
    base = samples[0][1] + samples[0][2]
    written = [(at, i + q - base, i - samples[0][1], q) for at, i, q in samples]
    first = next(n for n, w in enumerate(written) if w[1] > 0)
    last = next(n for n, w in enumerate(written) if w[1] >= links)
    since, until = written[max(0, first - 1)][0], written[last][0]
    seconds = max(0.25, (until - since).total_seconds())  # one sample at least

    def at(t) -> tuple:
        return written[min(range(len(written)), key=lambda n: abs(written[n][0] - t))]

    thirds = [since + (until - since) * k / 3 for k in range(4)]
    rounds = []
    for a, b in itertools.pairwise(thirds):
        wa, wb = at(a), at(b)
        span = (wb[0] - wa[0]).total_seconds() or 1e-9
        rounds.append({"written_per_s": round((wb[1] - wa[1]) / span),
                       "integrated_per_s": round((wb[2] - wa[2]) / span),
                       "queued_at_end": wb[3]})  # fmt: skip
    # A window shorter than the sampling interval (bench-smoke's tiny size) puts two
    # thirds on one sample: no write between them is no round; the whole window is.
    rounds = [r for r in rounds if r["written_per_s"] > 0] or [
        {"written_per_s": round(written[last][1] / seconds),
         "integrated_per_s": round(written[last][2] / seconds),
         "queued_at_end": written[last][3]}
    ]  # fmt: skip
    drained = next((w[0] for w in written[last:] if w[3] == 0), written[-1][0])
    queued = [w[3] for w in written[first : last + 1]]
    return {
        "rounds": rounds,
        "since": since,
        "until": until,
        "window_seconds": round(seconds, 2),
        "written_per_s": round(written[last][1] / seconds),
        "integrated_per_s": round(written[last][2] / seconds),
        "drained_after_s": round((drained - until).total_seconds(), 2),
        "queued": {
            "p50": percentile(queued, 0.5),
            "p99": percentile(queued, 0.99),
            "max": max(queued),
        },
    }


def _queue_lag(samples: list) -> dict:
    """How long each link written waited, from the first sample that saw it committed
    to the first that saw it in a signed checkpoint (the queue is integrated in order;
    to within the sampling interval): the lag the log adds once a write is done."""
    base_i, base_q = samples[0][1], samples[0][2]
    written = [(at, i + q - base_i - base_q) for at, i, q in samples]
    integrated = [(at, i - base_i) for at, i, _ in samples]
    lags, n, j = [], 0, 0
    for at, count in written:
        while n < count:  # links n+1 … count, first seen written at `at`
            while j < len(integrated) and integrated[j][1] <= n:
                j += 1
            if j == len(integrated):
                break
            lags.append(max(0.0, (integrated[j][0] - at).total_seconds()))
            n += 1
    return {
        "links": len(lags),
        "sampled_every_ms": SAMPLE_SECONDS * 1000,
        "p50_ms": ms(percentile(lags, 0.5)) if lags else None,
        "p99_ms": ms(percentile(lags, 0.99)) if lags else None,
        "max_ms": ms(max(lags)) if lags else None,
    }


def _lag(since, until) -> dict:
    """Each leaf written in the window: its covering checkpoint's signing time minus
    its write's time (the audit event's, taken when the bulk request began: the
    request's own time is in it)."""
    with raw_conn() as conn:
        lags = []
        for log_id in [r[0] for r in conn.execute("SELECT id FROM transparency_log")]:
            checkpoints = conn.execute(
                "SELECT size, signed_at FROM transparency_checkpoint WHERE log_id = %s "
                "ORDER BY size",
                (log_id,),
            ).fetchall()
            sizes = [c[0] for c in checkpoints]
            for index, at in conn.execute(
                'SELECT "index", at FROM transparency_leaf WHERE log_id = %s AND at >= %s '
                "AND at <= %s",
                (log_id, since, until),
            ):
                n = bisect.bisect_right(sizes, index)
                if n < len(checkpoints):
                    lags.append((checkpoints[n][1] - at).total_seconds())
    return {
        "leaves": len(lags),
        "p50_ms": ms(percentile(lags, 0.5)) if lags else None,
        "p99_ms": ms(percentile(lags, 0.99)) if lags else None,
        "max_ms": ms(max(lags)) if lags else None,
    }
