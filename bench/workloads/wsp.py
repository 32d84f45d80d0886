"""WSP import: one document per transaction, then in batches (import_wsp_documents),
and the COPY of the rows the batches wrote (their limit in the same run)."""

from __future__ import annotations

import random
import statistics
import time

from bench import app, generate, seed, seed_wsp
from bench.workloads.common import concurrent_writers, env_int, raw_conn


def wsp_import() -> dict:
    """WSP import one document per transaction, then the same kind of fresh documents
    through import_wsp_documents in batches (the headline figure), then a raw COPY of
    as many documents' rows in the same batches."""
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
    timings = []
    for start in range(0, batched_docs, batch_size):
        batch = batched[start : start + batch_size]
        began = time.perf_counter()
        outcomes = app.import_wsp_documents(actor=curator, documents=batch)
        timings.append(time.perf_counter() - began)
        assert all(getattr(o, "created", False) for o in outcomes), outcomes
    batched_observations = sum(len(d["observations"]) for d in batched)
    return {
        "documents": docs,
        "observations": observations,
        "per_document_observations_per_s": round(observations / seconds),
        "batched_documents": batched_docs,
        "batch_size": batch_size,
        "batched_observations": batched_observations,
        "observations_per_s": round(batched_observations / sum(timings)),
        "batch_p50_ms": round(statistics.median(timings) * 1000, 1),
        "copy": copy_baseline(batched[0]["execution_id"], batched_docs, batch_size),
        "concurrent": concurrent_writers(
            "wsp",
            batches=max(1, batched_docs // batch_size // 2),
            batch_size=batch_size,
            offset=20_000_000,
        ),
        "target_observations_per_s": 5000,
    }


def copy_baseline(execution_id: str, documents: int, batch_size: int) -> dict:
    """COPY of `documents` clones of an imported document's rows, `batch_size`
    documents per transaction, into scratch copies of the tables (indexes, no
    foreign keys)."""
    with raw_conn() as conn:
        template = seed_wsp.template_rows(conn, execution_id)
        per_document = seed_wsp.observations(template)
        batches = seed_wsp.batches(seed_wsp.clone_documents(template, documents), batch_size)
        seed.make_scratch_tables(conn, "bench_", seed_wsp.TABLES)
        seconds, rows = seed.copy_batches(conn, batches, target_prefix="bench_")
        seed.drop_scratch(conn, "bench_", seed_wsp.TABLES)
    observations = per_document * documents
    return {
        "documents": documents,
        "batch_size": batch_size,
        "observations": observations,
        "rows": rows,
        "rows_per_observation": round(rows / observations, 2),
        "rows_per_batch_by_table": {t: len(r) for t, _, r in batches[0]} if batches else {},
        "observations_per_s": round(observations / seconds),
    }
