"""Bulk writes: register_many beside the COPY of the rows one registration writes
(its limit, batch by batch), and change-notification fan-out beside the bulk
registration of the same links."""

from __future__ import annotations

import statistics
import time

from bench import app, generate, seed
from bench import rounds as turns
from bench.workloads.common import BATCH, concurrent_writers, env_int, raw_conn, template_link


def bulk_register() -> dict:
    """register_many through the service layer, batches of 1,000 links with history and
    audit, each batch followed by its limit: a raw psycopg COPY, then an executemany,
    of as many clones of the rows one registration writes, into scratch copies of the
    tables (their indexes, no foreign keys), one transaction per batch. Interleaved, so
    that a busy machine slows both alike. For context, the same COPY into copies that
    also carry the tables' foreign keys: the checks the registry cannot skip."""
    batches = env_int("BENCH_BULK_BATCHES", 10)
    curator = app.curator()
    template_id = template_link()
    registry, copy, many, keyed = [], [], [], []
    rows = 0
    offset = 1_000_000
    with raw_conn() as conn:
        template = seed.template_rows(conn, template_id)
        seed.make_scratch_tables(conn, "bench_")
        seed.make_scratch_tables(conn, "benchk_", foreign_keys=True)
        for batch in range(batches):
            items = [generate.register_payload(offset + batch * BATCH + i) for i in range(BATCH)]
            clones = seed.link_batches(template, BATCH, history_start=10_000_000 + batch * BATCH)
            started = time.perf_counter()
            app.register_many(actor=curator, items=items)
            registry.append(time.perf_counter() - started)
            seconds, written = seed.copy_batches(conn, clones, target_prefix="bench_")
            copy.append(seconds)
            rows += written
            seed.truncate_scratch(conn, "bench_")
            many.append(seed.insert_batches(conn, clones, target_prefix="bench_")[0])
            seed.truncate_scratch(conn, "bench_")
            keyed.append(seed.copy_batches(conn, clones, target_prefix="benchk_")[0])
            seed.truncate_scratch(conn, "benchk_")
        seed.drop_scratch(conn, "bench_")
        seed.drop_scratch(conn, "benchk_")
    links = BATCH * batches
    # Each batch and its COPY, one after the other, are a round (bench/rounds.py).
    rounds = [
        {"links_per_s": round(BATCH / r), "seconds": round(r, 4),
         "copy": {"links_per_s": round(BATCH / c), "seconds": round(c, 4)}}
        for r, c in zip(registry, copy, strict=True)
    ]  # fmt: skip
    return {
        "rounds": rounds,
        "batches": batches,
        "batch_size": BATCH,
        "links_per_s": round(links / sum(registry)),
        "batch_p50_ms": round(statistics.median(registry) * 1000, 1),
        "copy": {
            "rows_per_link": rows // links,
            "links_per_s": round(links / sum(copy)),
            "rows_per_s": round(rows / sum(copy)),
        },
        "executemany": {"links_per_s": round(links / sum(many))},
        "copy_with_foreign_keys": {"links_per_s": round(links / sum(keyed))},
        "concurrent": concurrent_writers(
            "register", batches=batches, batch_size=BATCH, offset=3_000_000
        ),
        "target_links_per_s": 5000,
    }


def fanout() -> dict:
    """A change notification fanned out to BENCH_FANOUT_LINKS links through the bulk
    writer in batches (one transaction each): in BENCH_ROUNDS rounds, each registering
    its share of the links in bulk and then fanning an answer change out to them (its
    limit and the path taking turns); then a source change of all of them, in links per
    second."""
    import resource

    count = env_int("BENCH_FANOUT_LINKS", 100000)
    rounds = max(1, env_int("BENCH_ROUNDS", turns.DEFAULT))
    curator = app.curator()
    source = "https://example.org/bench/fanout"
    offset = 40_000_000
    shares = [count // rounds + (1 if r < count % rounds else 0) for r in range(rounds)]
    measured, done = [], 0
    for n, share in enumerate(shares):
        # The links of this round registered in bulk, then fanned out: the registration,
        # just before the fan-out on the same tables, is what fanout_over_bulk compares.
        answer = f"urn:bench:answer:fanout-{n}@1"
        started = time.perf_counter()
        for start in range(done, done + share, BATCH):
            items = []
            for i in range(start, min(done + share, start + BATCH)):
                item = generate.register_payload(offset + i)
                item["statement"]["answer_revision_ref"] = answer
                item["passage"]["source_revision_binding"]["source_ref"] = source
                items.append(item)
            app.register_many(actor=curator, items=items)
        registered = time.perf_counter() - started
        done += share
        seconds = _notify(curator, "answer", answer, share, f"urn:bench:change:answer-{n}")
        measured.append({"links": share, "register_seconds": round(registered, 3),
                         "register_links_per_s": round(share / registered),
                         "answer": {"seconds": round(seconds, 3)},
                         "links_per_s": round(share / seconds)})  # fmt: skip
    register_seconds = sum(m["register_seconds"] for m in measured)
    answer_seconds = sum(m["answer"]["seconds"] for m in measured)
    figures = {"rounds": measured, "links": count, "batch_size": app.FANOUT_BATCH_SIZE,
               "register_seconds": round(register_seconds, 1),
               "register_links_per_s": round(count / register_seconds),
               "answer": {"seconds": round(answer_seconds, 2),
                          "links_per_s": round(count / answer_seconds)}}  # fmt: skip
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    seconds = _notify(curator, "source", source, count, "urn:bench:change:source")
    figures["source"] = {
        "seconds": round(seconds, 2),
        "links_per_s": round(count / seconds),
        "max_rss_growth_mb": round(
            (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024, 1
        ),
    }
    figures["links_per_s"] = figures["answer"]["links_per_s"]
    return figures


def _notify(curator, kind: str, subject: str, count: int, change_ref: str) -> float:
    """One change notification of `subject`, fanned out to `count` links: its seconds."""
    started = time.perf_counter()
    outcome = app.notify_change(
        actor=curator,
        payload={"dimension": app.DIMENSION, "change_ref": change_ref, "kind": kind,
                 "subject_ref": subject, "observed_at": "2026-12-01T09:00:00Z",
                 "reason": "bench"},
    )  # fmt: skip
    seconds = time.perf_counter() - started
    assert outcome.notification.affected == count, outcome.notification.affected
    return seconds
