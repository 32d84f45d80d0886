"""WSP import: one document per transaction, then in batches (import_wsp_documents),
each batch beside the COPY of as many documents' rows (its limit in the same run)."""

from __future__ import annotations

import random
import statistics
import time

from bench import app, generate, seed, seed_wsp
from bench.workloads.common import concurrent_writers, env_int, raw_conn


def wsp_import() -> dict:
    """WSP import one document per transaction, then the same kind of fresh documents
    through import_wsp_documents in batches (the headline figure), each batch beside a
    raw COPY of as many documents' rows into scratch copies of the tables (their
    indexes, no foreign keys), one transaction per batch; for context, also into
    copies carrying the tables' foreign keys."""
    docs = env_int("BENCH_WSP_DOCS", 100)
    batched_docs = env_int("BENCH_WSP_BATCHED_DOCS", 1000)
    batch_size = env_int("BENCH_WSP_BATCH_SIZE", 100)
    curator = app.curator()
    rng = random.Random(7)
    documents = [generate.wsp_response(n, rng) for n in range(docs)]
    started = time.perf_counter()
    for document in documents:
        app.import_wsp_document(actor=curator, document=document)
    seconds = time.perf_counter() - started
    observations = sum(len(d["observations"]) for d in documents)

    # Fresh executions (other indices, other texts): imports, not replays.
    rng = random.Random(11)
    batched = [generate.wsp_response(100_000 + n, rng) for n in range(batched_docs)]
    timings, copy, copies = _batches_beside_copy(curator, batched, batch_size)
    batched_observations = sum(len(d["observations"]) for d in batched)
    # Each batch and its COPY, one after the other, are a round (bench/rounds.py).
    per_batch = [
        sum(len(d["observations"]) for d in batched[start : start + batch_size])
        for start in range(0, len(batched), batch_size)
    ]
    per_document = copy["observations"] // max(1, len(batched))
    sizes = [len(batched[s : s + batch_size]) for s in range(0, len(batched), batch_size)]
    rounds = [
        {"observations_per_s": round(n / t), "seconds": round(t, 4),
         "copy": {"observations_per_s": round(per_document * d / c), "seconds": round(c, 4)}}
        for n, t, c, d in zip(per_batch, timings, copies, sizes, strict=True)
    ]  # fmt: skip
    return {
        "rounds": rounds,
        "documents": docs,
        "observations": observations,
        "per_document_observations_per_s": round(observations / seconds),
        "batched_documents": batched_docs,
        "batch_size": batch_size,
        "batched_observations": batched_observations,
        "observations_per_s": round(batched_observations / sum(timings)),
        "batch_p50_ms": round(statistics.median(timings) * 1000, 1),
        "copy": copy,
        "concurrent": concurrent_writers(
            "wsp",
            batches=max(1, batched_docs // batch_size // 2),
            batch_size=batch_size,
            offset=20_000_000,
        ),
        "target_observations_per_s": 5000,
    }


def _batches_beside_copy(
    curator, documents: list, batch_size: int
) -> tuple[list[float], dict, list[float]]:
    """Import `documents` in batches, each followed by its limit: a COPY of as many
    documents' rows (cloned from the first document imported), so that a busy machine
    slows both alike. The import's seconds per batch, the COPY's figures, and the
    COPY's seconds per batch."""
    timings, copies, keyed = [], [], []
    clones: list = []
    rows = per_document = 0
    with raw_conn() as conn:
        seed.make_scratch_tables(conn, "bench_", seed_wsp.TABLES)
        seed.make_scratch_tables(conn, "benchk_", seed_wsp.TABLES, foreign_keys=True)
        for index, start in enumerate(range(0, len(documents), batch_size)):
            batch = documents[start : start + batch_size]
            began = time.perf_counter()
            outcomes = app.import_wsp_documents(actor=curator, documents=batch)
            timings.append(time.perf_counter() - began)
            assert all(getattr(o, "created", False) for o in outcomes), outcomes
            if not clones:
                template = seed_wsp.template_rows(conn, documents[0]["execution_id"])
                per_document = seed_wsp.observations(template)
                copied = seed_wsp.clone_documents(template, len(documents))
                clones = seed_wsp.batches(copied, batch_size)
            seconds, written = seed.copy_batches(conn, [clones[index]], target_prefix="bench_")
            copies.append(seconds)
            rows += written
            keyed.append(seed.copy_batches(conn, [clones[index]], target_prefix="benchk_")[0])
        seed.drop_scratch(conn, "bench_", seed_wsp.TABLES)
        seed.drop_scratch(conn, "benchk_", seed_wsp.TABLES)
    observations = per_document * len(documents)
    return (
        timings,
        {
            "observations": observations,
            "rows": rows,
            "rows_per_observation": round(rows / observations, 2),
            "rows_per_batch_by_table": {t: len(r) for t, _, r in clones[0]},
            "observations_per_s": round(observations / sum(copies)),
            "with_foreign_keys_observations_per_s": round(observations / sum(keyed)),
        },
        copies,
    )
