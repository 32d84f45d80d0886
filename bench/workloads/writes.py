"""Bulk writes: register_many and change-notification fan-out, and the COPY of the
rows one registration writes (their limit in the same run)."""

from __future__ import annotations

import statistics
import time

from bench import app, generate, seed
from bench.workloads.common import BATCH, concurrent_writers, env_int, raw_conn, template_link


def baseline() -> dict:
    """Raw psycopg COPY and executemany of the rows one registration writes, in
    transactions of BATCH links as register_many writes them, into scratch copies of
    the tables (their indexes, no foreign keys)."""
    count = env_int("BENCH_BASELINE_LINKS", 20000)
    template_id = template_link()
    with raw_conn() as conn:
        template = seed.template_rows(conn, template_id)
        seed.make_scratch_tables(conn, "bench_")
        copy_seconds, rows = seed.copy_links(
            conn, template, count, target_prefix="bench_", batch=BATCH
        )
        seed.truncate_scratch(conn, "bench_")
        many_seconds, _ = seed.insert_links(
            conn, template, count, target_prefix="bench_", batch=BATCH
        )
        seed.drop_scratch(conn, "bench_")
    return {
        "links": count,
        "batch_size": BATCH,
        "rows_per_link": rows // count,
        "copy_links_per_s": round(count / copy_seconds),
        "copy_rows_per_s": round(rows / copy_seconds),
        "executemany_links_per_s": round(count / many_seconds),
        "executemany_rows_per_s": round(rows / many_seconds),
    }


def bulk_register() -> dict:
    """register_many through the service layer, batches of 1,000, history and audit."""
    batches = env_int("BENCH_BULK_BATCHES", 10)
    curator = app.curator()
    timings = []
    offset = 1_000_000
    for batch in range(batches):
        items = [generate.register_payload(offset + batch * BATCH + i) for i in range(BATCH)]
        started = time.perf_counter()
        app.register_many(actor=curator, items=items)
        timings.append(time.perf_counter() - started)
    per_s = BATCH * batches / sum(timings)
    return {
        "batches": batches,
        "batch_size": BATCH,
        "links_per_s": round(per_s),
        "batch_p50_ms": round(statistics.median(timings) * 1000, 1),
        "concurrent": concurrent_writers(
            "register", batches=batches, batch_size=BATCH, offset=3_000_000
        ),
        "target_links_per_s": 5000,
    }


def fanout() -> dict:
    """A change notification fanned out to BENCH_FANOUT_LINKS links through the bulk
    writer in batches (one transaction each): an answer change (a new statement binding
    per link) and a source change of the same links, in links per second."""
    import resource

    count = env_int("BENCH_FANOUT_LINKS", 100000)
    curator = app.curator()
    answer = "urn:bench:answer:fanout@1"
    source = "https://example.org/bench/fanout"
    offset = 40_000_000
    started = time.perf_counter()
    for start in range(0, count, BATCH):
        items = []
        for i in range(start, min(count, start + BATCH)):
            item = generate.register_payload(offset + i)
            item["statement"]["answer_revision_ref"] = answer
            item["passage"]["source_revision_binding"]["source_ref"] = source
            items.append(item)
        app.register_many(actor=curator, items=items)
    register_seconds = time.perf_counter() - started
    figures = {"links": count, "batch_size": app.FANOUT_BATCH_SIZE,
               "register_seconds": round(register_seconds, 1)}  # fmt: skip
    for kind, subject in (("answer", answer), ("source", source)):
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.perf_counter()
        outcome = app.notify_change(
            actor=curator,
            payload={"dimension": app.DIMENSION, "change_ref": f"urn:bench:change:{kind}",
                     "kind": kind, "subject_ref": subject,
                     "observed_at": "2026-12-01T09:00:00Z", "reason": "bench"},
        )  # fmt: skip
        seconds = time.perf_counter() - started
        assert outcome.notification.affected == count, outcome.notification.affected
        figures[kind] = {
            "seconds": round(seconds, 2),
            "links_per_s": round(count / seconds),
            "max_rss_growth_mb": round(
                (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024, 1
            ),
        }
    figures["links_per_s"] = figures["answer"]["links_per_s"]
    return figures
