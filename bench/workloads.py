"""The benchmark's six measurements. Each returns a dict of figures."""

from __future__ import annotations

import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

from django.db import connection

from bench import generate, seed
from bench.run import percentile

ROOT = Path(__file__).resolve().parent.parent
BATCH = 1000


def _curator():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username="demo-curator")


def _raw_conn():
    import psycopg

    return psycopg.connect(os.environ["DATABASE_URL"])


def _template_link() -> uuid.UUID:
    from grounding import services

    link = services.register(actor=_curator(), payload=generate.register_payload(0))
    return link.grounding_id


def baseline() -> dict:
    """Raw psycopg COPY and executemany of the rows one registration writes."""
    count = int(os.environ.get("BENCH_BASELINE_LINKS", "20000"))
    template_id = _template_link()
    with _raw_conn() as conn:
        template = seed.template_rows(conn, template_id)
        seed.make_scratch_tables(conn, "bench_")
        copy_seconds, rows = seed.copy_links(conn, template, count, target_prefix="bench_")
        seed.truncate_scratch(conn, "bench_")
        many_seconds, _ = seed.insert_links(conn, template, count, target_prefix="bench_")
        seed.truncate_scratch(conn, "bench_")
    return {
        "links": count,
        "rows_per_link": rows // count,
        "copy_links_per_s": round(count / copy_seconds),
        "copy_rows_per_s": round(rows / copy_seconds),
        "executemany_links_per_s": round(count / many_seconds),
        "executemany_rows_per_s": round(rows / many_seconds),
    }


def bulk_register() -> dict:
    """register_many through the service layer, batches of 1,000, history and audit."""
    from grounding import services

    batches = int(os.environ.get("BENCH_BULK_BATCHES", "10"))
    curator = _curator()
    timings = []
    offset = 1_000_000
    for batch in range(batches):
        items = [generate.register_payload(offset + batch * BATCH + i) for i in range(BATCH)]
        started = time.perf_counter()
        services.register_many(actor=curator, items=items)
        timings.append(time.perf_counter() - started)
    per_s = BATCH * batches / sum(timings)
    return {
        "batches": batches,
        "batch_size": BATCH,
        "links_per_s": round(per_s),
        "batch_p50_ms": round(statistics.median(timings) * 1000, 1),
        "concurrent": concurrent_writers(
            "register",
            writers=os.cpu_count() or 2,
            batches=batches,
            batch_size=BATCH,
            offset=3_000_000,
        ),
        "target_links_per_s": 5000,
    }


def fanout() -> dict:
    """A change notification fanned out to BENCH_FANOUT_LINKS links through the bulk
    writer in batches (one transaction each): an answer change (a new statement binding
    per link) and a source change of the same links, in links per second."""
    import resource

    from grounding import services
    from grounding.services.fanout import BATCH_SIZE

    count = int(os.environ.get("BENCH_FANOUT_LINKS", "100000"))
    curator = _curator()
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
        services.register_many(actor=curator, items=items)
    register_seconds = time.perf_counter() - started
    figures = {"links": count, "batch_size": BATCH_SIZE,
               "register_seconds": round(register_seconds, 1)}  # fmt: skip
    for kind, subject in (("answer", answer), ("source", source)):
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.perf_counter()
        outcome = services.notify_change(
            actor=curator,
            payload={"dimension": "demo", "change_ref": f"urn:bench:change:{kind}",
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


def concurrent_writers(kind: str, *, writers: int, batches: int, batch_size: int,
                       offset: int) -> dict:  # fmt: skip
    """The same kind of batches from one writer process per core at once: how a
    deployment with several app server processes takes bulk writes."""
    start = time.time() + 20  # every writer has built its batches and warmed up by then
    commands = [
        [sys.executable, "-m", "bench.writer", "--kind", kind, "--offset",
         str(offset + w * 1_000_000), "--batches", str(batches), "--batch-size",
         str(batch_size), "--start", str(start)]
        for w in range(writers)
    ]  # fmt: skip
    procs = [subprocess.Popen(c, cwd=ROOT, stdout=subprocess.PIPE, text=True) for c in commands]
    runs = [json.loads(proc.communicate(timeout=900)[0]) for proc in procs]
    if any(proc.returncode for proc in procs):
        raise RuntimeError(f"a {kind} writer failed")
    wall = max(r["ended"] for r in runs) - min(r["started"] for r in runs)
    units = sum(r["units"] for r in runs)
    return {"writers": writers, "units": units, "per_s": round(units / wall)}


def wsp_import() -> dict:
    """WSP import one document per transaction, then the same kind of fresh documents
    through import_wsp_documents in batches (the headline figure)."""
    from evidence.services.wsp_import import import_wsp_document, import_wsp_documents

    docs = int(os.environ.get("BENCH_WSP_DOCS", "100"))
    batched_docs = int(os.environ.get("BENCH_WSP_BATCHED_DOCS", "1000"))
    batch_size = int(os.environ.get("BENCH_WSP_BATCH_SIZE", "100"))
    curator = _curator()
    rng = random.Random(7)
    documents = [generate.wsp_response(n, rng) for n in range(docs)]
    started = time.perf_counter()
    for document in documents:
        import_wsp_document(actor=curator, document=document)
    seconds = time.perf_counter() - started
    observations = sum(len(d["observations"]) for d in documents)

    # Fresh executions (other indices, other texts): imports, not replays.
    rng = random.Random(11)
    batched = [generate.wsp_response(100_000 + n, rng) for n in range(batched_docs)]
    timings = []
    for start in range(0, batched_docs, batch_size):
        batch = batched[start : start + batch_size]
        began = time.perf_counter()
        outcomes = import_wsp_documents(actor=curator, documents=batch)
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
        "concurrent": concurrent_writers(
            "wsp",
            writers=os.cpu_count() or 2,
            batches=max(1, batched_docs // batch_size // 2),
            batch_size=batch_size,
            offset=20_000_000,
        ),
        "target_observations_per_s": 5000,
    }


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def gunicorn(ports: list[int], workers: int, threads: int):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "bench.settings"}
    procs = []
    for port in ports:
        procs.append(
            subprocess.Popen(
                [
                    str(Path(sys.executable).parent / "gunicorn"),
                    "grounding.project.wsgi",
                    "--bind",
                    f"127.0.0.1:{port}",
                    "--workers",
                    str(workers),
                    "--threads",
                    str(threads),
                    "--worker-class",
                    os.environ.get("BENCH_GUNICORN_WORKER_CLASS", "sync"),
                    "--log-level",
                    "warning",
                ],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    try:
        for port in ports:
            deadline = time.time() + 30
            while time.time() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.2)
        time.sleep(1.0)
        yield
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=20)


def _load(ports, path, token, bodies, *, clients, requests, seconds, method="POST", if_match="",
          barrier=False) -> dict:  # fmt: skip
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(bodies, handle)
    command = [
        sys.executable, "-m", "bench.loadgen", "--ports", ",".join(map(str, ports)),
        "--path", path, "--method", method, "--token", token, "--body-file", handle.name,
        "--clients", str(clients), "--requests", str(requests), "--seconds", str(seconds),
    ]  # fmt: skip
    if if_match:
        command += ["--if-match", if_match]
    if barrier:
        command.append("--barrier")
    output = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    os.unlink(handle.name)
    data = json.loads(output)
    latencies = data["latencies"]
    return {
        "requests": len(latencies),
        "wall_seconds": round(data["wall_seconds"], 3),
        "req_per_s": round(len(latencies) / data["wall_seconds"], 1),
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 2),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
        "statuses": data["statuses"],
    }


def http_register(tokens: dict) -> dict:
    requests = int(os.environ.get("BENCH_HTTP_REQUESTS", "3000"))
    workers = int(os.environ.get("BENCH_GUNICORN_WORKERS", str(2 * (os.cpu_count() or 2))))
    threads = int(os.environ.get("BENCH_GUNICORN_THREADS", "1"))
    port = _free_port()
    bodies = [generate.register_payload(2_000_000 + i) for i in range(200)]
    with gunicorn([port], workers, threads):
        # Warm every worker before measuring.
        _load([port], "/api/v1/groundings/", tokens["curator"], bodies, clients=16,
              requests=200, seconds=20)  # fmt: skip
        register = _load([port], "/api/v1/groundings/", tokens["curator"], bodies, clients=16,
                         requests=requests, seconds=60)  # fmt: skip
        floor = _load([port], "/bench/bare/", tokens["curator"], [{}], clients=16,
                      requests=requests, seconds=60)  # fmt: skip
    return {
        "gunicorn_workers": workers,
        "gunicorn_threads": threads,
        "clients": 16,
        "register": register,
        "bare_insert_floor": floor,
        "register_vs_floor_ratio": round(floor["req_per_s"] / max(register["req_per_s"], 0.1), 2),
        "targets": {"req_per_s": 300, "p99_ms": 100},
    }


def concurrency(tokens: dict) -> dict:
    """32 writers on one revision through two gunicorn instances sharing the database."""
    from grounding.models import GroundingLink

    grounding_id = _template_link()
    ports = [_free_port(), _free_port()]
    bodies = [
        {"owner_ref": f"role:writer-{i}", "revision_reason": f"writer {i}"} for i in range(32)
    ]
    with gunicorn(ports, 2, 2):
        result = _load(ports, f"/api/v1/groundings/{grounding_id}/", tokens["curator"], bodies,
                       clients=32, requests=32, seconds=60, method="PATCH", if_match='"1"',
                       barrier=True)  # fmt: skip
    link = GroundingLink.objects.get(pk=grounding_id)
    history = GroundingLink.history.filter(grounding_id=grounding_id).count()
    return {
        "writers": 32,
        "servers": 2,
        "statuses": result["statuses"],
        "successes": result["statuses"].get("200", 0),
        "final_revision": link.revision,
        "history_rows": history,
        "lost_updates": 0 if (link.revision == 2 and history == 2) else abs(link.revision - 2),
        "wall_ms": round(result["wall_seconds"] * 1000, 1),
    }


def reads_at_scale(tokens: dict) -> dict:
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from grounding import services
    from grounding.models import GroundingLink

    count = int(os.environ.get("BENCH_READ_LINKS", "1000000"))
    missing = max(0, count - GroundingLink.objects.count())
    template_id = _template_link()
    kinds = ("quotation", "paraphrase", "inferential", "contextual")

    def vary(table, columns, values, index):
        if "record_state" in columns:
            values[columns.index("record_state")] = ("candidate", "admitted")[index % 2]
        if "support_kind" in columns:
            values[columns.index("support_kind")] = kinds[index % 4]

    started = time.perf_counter()
    chunk = 50_000
    with _raw_conn() as conn:
        template = seed.template_rows(conn, template_id)
        start = 50_000_000 + GroundingLink.history.count()
        for offset in range(0, missing, chunk):
            seed.copy_links(conn, template, min(chunk, missing - offset), vary=vary,
                            history_start=start + offset)  # fmt: skip
        conn.execute("ANALYZE")
        conn.commit()
    seed_seconds = time.perf_counter() - started

    client = Client(HTTP_AUTHORIZATION=f"Token {tokens['curator']}")
    # index % 4 == 1 is paraphrase, index % 2 == 1 is admitted: a quarter of the corpus.
    path = "/api/v1/groundings/?dimension=demo&record_state=admitted&support_kind=paraphrase"

    def timed(url: str, n: int = 30) -> tuple[list[float], int]:
        client.get(url)
        samples = []
        queries = 0
        for _ in range(n):
            with CaptureQueriesContext(connection) as ctx:
                started = time.perf_counter()
                response = client.get(url)
                samples.append(time.perf_counter() - started)
            assert response.status_code == 200, response.content[:300]
            queries = len(ctx.captured_queries)
        return samples, queries

    list_samples, list_queries = timed(path)
    page = client.get(path).json()
    results_on_page = len(page["results"])

    curator = _curator()
    deep = _template_link()
    for revision in range(1, 1000):
        services.revise(actor=curator, grounding_id=deep, expected_revision=revision,
                        changes={"owner_ref": f"role:o{revision}",
                                 "revision_reason": f"step {revision}"})  # fmt: skip
    revisions = {}
    for depth in (1, 100, 1000):
        samples, queries = timed(f"/api/v1/groundings/{deep}/revisions/{depth}/")
        revisions[str(depth)] = {
            "p50_ms": round(statistics.median(samples) * 1000, 2),
            "queries": queries,
        }
    return {
        "links": GroundingLink.objects.count(),
        "seed_seconds": round(seed_seconds, 1),
        "list_page_size": results_on_page,
        "list_queries": list_queries,
        "list_p50_ms": round(statistics.median(list_samples) * 1000, 2),
        "list_p99_ms": round(percentile(list_samples, 0.99) * 1000, 2),
        "revisions": revisions,
        "targets": {"list_queries": 6, "list_p50_ms": 30},
    }
