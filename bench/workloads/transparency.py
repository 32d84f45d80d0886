"""The transparency log (docs/transparency.md): what it costs the writes, how proofs
scale, how fast the verifier is, and how far checkpoints lag a steady write load.

- bulk registration with the log and with it off in this process
  (`transparency.enqueue.switch`), phases taking turns, the sequencer service
  (`manage.py run_sequencer`, as in production) running all along; a phase with the
  log timed until its writes returned and until the sequencer integrated them;
- HTTP register under gunicorn: a server with the log and one without
  (GROUNDING_LOG_ENABLED=0), taking turns, the sequencer running; the checkpoint lag
  of each write of the logged server (its covering checkpoint's signing time minus
  the write's) is its steady-load lag;
- inclusion proofs (GET /api/v1/log/proof/inclusion, in process) at 10k, 100k and
  1M leaves of a scratch log whose tree is built by the sequencer's own append;
- verify_log beside the least a verifier must do (bench/verify_floor.py: the leaves
  and every committed row read, hashed and HMACed in a loop), --skip-commitments
  beside the leaves and the tree's nodes hashed in a loop (the demo log grown first
  to BENCH_LOG_VERIFY_LEAVES leaves), in rounds taking turns.
"""

from __future__ import annotations

import hashlib
import os
import random
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from bench import app, generate
from bench import rounds as turns
from bench.workloads.common import BATCH, ROOT, env_int, ms, percentile, raw_conn
from bench.workloads.serving import (
    CLIENTS,
    REGISTER,
    _free_port,
    _loadgen,
    _summary,
    _wsgi_app,
    serving,
)

SCALES = (10_000, 100_000, 1_000_000)


@contextmanager
def sequencer_service():
    """`manage.py run_sequencer` in its own process, as docker-compose runs it."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "bench.settings"}
    process = subprocess.Popen(
        [sys.executable, "manage.py", "run_sequencer", "--interval", "0.2"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        time.sleep(2)
        yield
    finally:
        process.terminate()
        process.wait(timeout=20)


PARTS = ("writes", "verify", "proofs")


def transparency_log(tokens: dict) -> dict:
    """BENCH_LOG_PARTS=writes,verify,proofs [all]: which parts run (writes: bulk and HTTP
    with the log and without, and the checkpoint lag)."""
    from transparency import sequencer

    parts = set(filter(None, os.environ.get("BENCH_LOG_PARTS", ",".join(PARTS)).split(",")))
    out: dict = {}
    bulk, http, verify = [], [], []
    if "writes" in parts:
        # The earlier steps' writes, queued with no sequencer running, integrated
        # first: else the first phase with the log waits for all of them (the 293
        # links/s "until integrated" of #37 was this backlog, not the sequencer's pace).
        started = time.perf_counter()
        backlog = sequencer.integrate()
        out["backlog"] = {"leaves": backlog, "seconds": round(time.perf_counter() - started, 2)}
        with sequencer_service():
            out["bulk"], bulk = _bulk_on_and_off()
            out["http"], http = _http_on_and_off(tokens)
            out["checkpoint_lag"] = _lag_since(out["http"].pop("since"))
    sequencer.integrate()
    if "verify" in parts:
        out["verify"], verify = _verify_beside_hashing()
    if "proofs" in parts:
        out["proofs"] = _proof_scaling(tokens)
    out["rounds"] = turns.merge(bulk, http, verify)
    return out


def _bulk_on_and_off() -> tuple[dict, list[dict]]:
    """BENCH_ROUNDS rounds, each a phase with the log and one with it off (taking
    turns), of BENCH_LOG_BULK_BATCHES / rounds batches each, the sequencer service
    integrating all along. A phase with the log is timed twice: until its last write
    returned (what the writer sees: the ratio, as for HTTP register), and until the
    sequencer has integrated it all (context: the log keeps up or the phase waits for
    it; its tail is one batch's checkpoint lag). The figures, and each round's."""
    from transparency import enqueue
    from transparency.models import PendingWrite

    batches = env_int("BENCH_LOG_BULK_BATCHES", 6)
    count = max(1, env_int("BENCH_ROUNDS", turns.DEFAULT))
    each = max(1, batches // count)
    curator = app.curator()
    offset, done = 5_000_000, 0

    def phase(on: bool) -> dict:
        nonlocal done
        enqueue.switch(on)
        started = time.perf_counter()
        for _ in range(each):
            items = [generate.register_payload(offset + done + i) for i in range(BATCH)]
            app.register_many(actor=curator, items=items)
            done += BATCH
        seconds = time.perf_counter() - started
        figures = {"seconds": round(seconds, 3), "links_per_s": round(BATCH * each / seconds)}
        deadline = time.monotonic() + 600
        while on and PendingWrite.objects.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        if on:
            integrated = time.perf_counter() - started
            figures["integrated_links_per_s"] = round(BATCH * each / integrated)
        return figures

    try:
        measured = turns.taking_turns(count, [("on", lambda _: phase(True)),
                                              ("off", lambda _: phase(False))])  # fmt: skip
    finally:
        enqueue.switch(True)
    rounds = [
        {"bulk": {"on_links_per_s": r["on"]["links_per_s"],
                  "off_links_per_s": r["off"]["links_per_s"],
                  "on_integrated_links_per_s": r["on"]["integrated_links_per_s"],
                  "on_seconds": r["on"]["seconds"], "off_seconds": r["off"]["seconds"]}}
        for r in measured
    ]  # fmt: skip
    links = BATCH * each * count
    return {
        "batches_each": each * count,
        "batch_size": BATCH,
        "on_links_per_s": round(links / sum(r["on"]["seconds"] for r in measured)),
        "off_links_per_s": round(links / sum(r["off"]["seconds"] for r in measured)),
        "on_integrated_links_per_s": turns.median(
            [r["on"]["integrated_links_per_s"] for r in measured]
        ),
    }, rounds


@contextmanager
def _servers(ports: dict[bool, int], workers: int, threads: int):
    procs = []
    for on, port in ports.items():
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "bench.settings",
            "GROUNDING_LOG_ENABLED": "1" if on else "0",
            "GROUNDING_LOG_SEQUENCER": "service",
        }
        command = [
            str(Path(sys.executable).parent / "gunicorn"), _wsgi_app(),
            "--bind", f"127.0.0.1:{port}", "--workers", str(workers),
            "--threads", str(threads), "--log-level", "warning",
        ]  # fmt: skip
        procs.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))  # fmt: skip
    with serving(procs, ports.values()):
        yield


def _http_on_and_off(tokens: dict) -> tuple[dict, list[dict]]:
    from django.utils import timezone

    requests = env_int("BENCH_LOG_HTTP_REQUESTS", 2000)
    rounds = env_int("BENCH_HTTP_ROUNDS", 3)
    workers = env_int("BENCH_GUNICORN_WORKERS", 2 * (os.cpu_count() or 2))
    ports = {True: _free_port(), False: _free_port()}
    token = tokens["curator"]
    bodies = {on: [generate.register_payload((6_000_000 if on else 6_100_000) + i)
                   for i in range(200)] for on in ports}  # fmt: skip
    runs: dict[bool, list[dict]] = {True: [], False: []}
    with _servers(ports, workers, 1):
        for on, port in ports.items():
            _loadgen([port], REGISTER, token, bodies[on], clients=CLIENTS, requests=200,
                     seconds=20)  # fmt: skip
        since = timezone.now()
        for turn in range(rounds):
            share = requests // rounds + (1 if turn < requests % rounds else 0)
            for on, port in ports.items():
                runs[on].append(_loadgen([port], REGISTER, token, bodies[on], clients=CLIENTS,
                                         requests=share, seconds=120))  # fmt: skip
    rounds = [{"http": {"on": _summary([on]), "off": _summary([off])}}
              for on, off in zip(runs[True], runs[False], strict=True)]  # fmt: skip
    figures = {"on": _summary(runs[True]), "off": _summary(runs[False]), "since": since}
    return figures, rounds


def _lag_since(since) -> dict:
    """Each logged write since `since`: its covering checkpoint's signing time minus the
    write's own time (the audit event's), read back from the database."""
    from transparency import sequencer

    time.sleep(1)
    sequencer.integrate()
    with raw_conn() as conn:
        lags = [
            row[0]
            for row in conn.execute(
                "SELECT EXTRACT(EPOCH FROM (SELECT min(c.signed_at) FROM transparency_checkpoint c "
                'WHERE c.log_id = l.log_id AND c.size > l."index") - l.at) '
                "FROM transparency_leaf l WHERE l.at >= %s AND l.action = 'register'",
                (since,),
            )
            if row[0] is not None
        ]
    lags = [float(x) for x in lags]
    return {
        "writes": len(lags),
        "p50_ms": ms(percentile(lags, 0.5)) if lags else None,
        "p99_ms": ms(percentile(lags, 0.99)) if lags else None,
        "max_ms": ms(max(lags)) if lags else None,
    }


def _grow_demo_log() -> None:
    """The demo log grown by bulk registration (the sequencer integrating each batch)
    to BENCH_LOG_VERIFY_LEAVES [100000] leaves (kept with BENCH_REUSE_DB=1)."""
    from transparency import sequencer
    from transparency.models import Log

    want = env_int("BENCH_LOG_VERIFY_LEAVES", 100_000)
    curator = app.curator()
    offset = 7_000_000
    while (size := Log.objects.get(dimension__name=app.DIMENSION).size) < want:
        items = [generate.register_payload(offset + size + i) for i in range(BATCH)]
        app.register_many(actor=curator, items=items)
        sequencer.integrate()


def _verify_beside_hashing() -> tuple[dict, list[dict]]:
    """verify_log of the demo log beside the least its checks must do
    (bench/verify_floor.py), in BENCH_ROUNDS rounds taking turns: the full check
    beside reading the leaves and every committed row and key they name, hashing the
    leaves and HMACing the rows in one loop; `--skip-commitments` beside hashing the
    leaves and the tree's nodes in a loop; and, for context, the leaves alone read and
    hashed (the baseline before #37)."""
    from bench import verify_floor
    from transparency import notes
    from transparency.models import Log
    from transparency.verifier import verify

    _grow_demo_log()
    log = Log.objects.get(dimension__name=app.DIMENSION)
    key = notes.signer().verifier_key
    reports = []

    def timed(work) -> float:
        started = time.perf_counter()
        reports.append(work())
        return time.perf_counter() - started

    measured = turns.taking_turns(
        max(1, env_int("BENCH_ROUNDS", turns.DEFAULT)),
        [
            ("leaves", lambda _: timed(lambda: verify_floor.leaves_hashed(raw_conn, log.pk))),
            ("must_do", lambda _: timed(lambda: verify_floor.must_do(raw_conn, log.pk))),
            ("verify", lambda _: timed(lambda: verify(app.DIMENSION, verifier_key=key))),
            ("tree", lambda _: timed(lambda: verify_floor.tree_hashed(raw_conn, log.pk))),
            ("tree_only", lambda _: timed(
                lambda: verify(app.DIMENSION, verifier_key=key, commitments=False))),
        ],
    )  # fmt: skip
    count, report = log.size, reports[2]
    names = {"leaves": "hashing_leaves_per_s", "must_do": "must_do_leaves_per_s",
             "verify": "verify_leaves_per_s", "tree": "tree_hashing_leaves_per_s",
             "tree_only": "verify_tree_only_leaves_per_s"}  # fmt: skip
    rounds = [
        {"verify": {names[k]: round(count / seconds) for k, seconds in r.items()}} for r in measured
    ]
    return {
        "leaves": count,
        "commitments": report.commitments,
        "ok": report.ok,
        # What verify_log found, when it found anything: a log the bench's own steps
        # broke measures the verifier on another path (its findings), not a clean log.
        "problems": len(report.problems),
        "first_problems": [str(p) for p in report.problems[:3]],
        **{
            name: round(turns.median([r["verify"][name] for r in rounds]))
            for name in names.values()
        },
    }, rounds


def _proof_scaling(tokens: dict) -> dict:
    """Inclusion proofs over HTTP (in process) at each size of a scratch log."""
    from django.test import Client

    from policies.models import Dimension, DimensionMembership
    from transparency import merkle, notes
    from transparency.models import Checkpoint, Log, Node

    top = max(env_int("BENCH_LOG_PROOF_LEAVES", SCALES[-1]), SCALES[0])
    sizes = [s for s in SCALES if s <= top]
    dimension, _ = Dimension.objects.get_or_create(
        name="bench-log", defaults={"namespace": "urn:bench:log"}
    )
    log = Log.objects.get(dimension=dimension)
    DimensionMembership.objects.get_or_create(
        user=app.curator(), dimension=dimension, role="curator"
    )
    Node.objects.filter(log=log).delete()
    Checkpoint.objects.filter(log=log).delete()
    client = Client(HTTP_AUTHORIZATION=f"Token {tokens['curator']}")
    edge, size, out = [], 0, {}
    rng = random.Random(7)
    for target in sizes:
        hashes = (hashlib.sha256(i.to_bytes(8, "big")).digest() for i in range(size, target))
        edge, created = merkle.append(edge, size, hashes)
        with raw_conn() as conn, conn.cursor() as cursor:
            with cursor.copy(
                "COPY transparency_node (log_id, level, position, hash) FROM STDIN"
            ) as copy:
                for (level, position), digest in created:
                    copy.write_row((log.pk, level, position, digest))
            conn.commit()
        size = target
        root = merkle.root_of(edge)
        note = notes.sign_checkpoint(dimension.name, size, root)
        Checkpoint.objects.create(log=log, size=size, root_hash=root, note=note)
        Log.objects.filter(pk=log.pk).update(size=size, root_hash=root, checkpoint=note)
        samples = []
        for _ in range(20):  # warm: the first requests of a size read cold pages
            client.get("/api/v1/log/proof/inclusion",
                       {"dimension": dimension.name, "index": rng.randrange(size)})  # fmt: skip
        for _ in range(env_int("BENCH_LOG_PROOFS", 200)):
            index = rng.randrange(size)
            started = time.perf_counter()
            response = client.get("/api/v1/log/proof/inclusion",
                                  {"dimension": dimension.name, "index": index})  # fmt: skip
            samples.append(time.perf_counter() - started)
            assert response.status_code == 200, response.content[:300]
        out[str(size)] = {"p50_ms": ms(statistics.median(samples)),
                          "p99_ms": ms(percentile(samples, 0.99))}  # fmt: skip
    return out
