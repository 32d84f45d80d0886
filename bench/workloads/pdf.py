"""PDF import (docs/api.md "PDF evidence"): pages/s importing a text PDF beside the
extraction library alone on the same file in this process, and the peak RSS of a
server process (a gunicorn worker) importing a PDF of ~50 MB.

The limit is the extraction itself, in this process: pypdfium2 reading every page
the way evidence.pdf does (its text layer, with the check for characters whose font
maps them to no Unicode), no child, no database. The import adds the forked child
under its limits, the digests and the rows (document, content, passages and their
history, audit event). Both take turns, BENCH_PDF_ROUNDS times; medians. For context,
PDFium's plain text extraction (get_text_range alone) is reported too.

Knobs: BENCH_PDF_PAGES [200], BENCH_PDF_ROUNDS [3], BENCH_PDF_RSS_MB [50] (the size of
the PDF the server imports; its pages are text, the rest one embedded file).
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.workloads.common import env_int
from bench.workloads.serving import ROOT, _free_port, _wsgi_app, serving

TARGET_RATIO = 1.5
TARGET_RSS_MB = 300
_WORDS = (
    "The annual report records revenue, costs and the bridge that opened in 1932 after four "
    "years of work; maintenance of the span continued through the winter. "
)


def text_pdf(pages: int, *, attachment: int = 0) -> bytes:
    """`pages` pages of running text (fpdf2), and an embedded file of `attachment`
    random bytes (stored, not compressed) to make the file that large."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=10)
    for n in range(1, pages + 1):
        pdf.add_page()
        pdf.multi_cell(0, 5, f"Page {n}. " + _WORDS * 12)
    if attachment:
        pdf.embed_file(bytes=os.urandom(attachment), basename="data.bin", compress=False)
    return bytes(pdf.output())


def _library(data: bytes) -> float:
    """Seconds to read every page's text as evidence.pdf does, in this process."""
    from evidence import pdf

    started = time.perf_counter()
    kind, _ = pdf._read(data, max_pages=10**6)
    assert kind == "ok"
    return time.perf_counter() - started


def _plain(data: bytes) -> float:
    import pypdfium2 as pdfium

    started = time.perf_counter()
    document = pdfium.PdfDocument(data)
    for index in range(len(document)):
        page = document[index]
        textpage = page.get_textpage()
        textpage.get_text_range()
        textpage.close()
        page.close()
    document.close()
    return time.perf_counter() - started


def _import(data: bytes, ref: str) -> float:
    from bench import app
    from evidence.services.pdf_import import import_pdf_document

    started = time.perf_counter()
    # Named: an earlier step (the log's) makes the bench curator a curator of a second
    # Dimension, and an import without one is then refused dimension_required.
    result = import_pdf_document(
        actor=app.curator(), dimension=app.DIMENSION, file=data, source_ref=ref
    )
    assert result.created
    return time.perf_counter() - started


def pdf_import(tokens: dict) -> dict:
    pages = env_int("BENCH_PDF_PAGES", 200)
    rounds = env_int("BENCH_PDF_ROUNDS", 3)
    data = text_pdf(pages)
    library, plain, imports = [], [], []
    _library(data)  # warm: the library loaded, its caches filled
    for n in range(rounds):
        library.append(_library(data))
        plain.append(_plain(data))
        # Another ref each round: a new document, never a replay.
        imports.append(_import(data, f"https://bench.example.org/report-{time.time_ns()}-{n}.pdf"))
    library_pps = pages / statistics.median(library)
    import_pps = pages / statistics.median(imports)
    return {
        "pages": pages,
        "bytes": len(data),
        "rounds": rounds,
        "import_pages_per_s": round(import_pps, 1),
        "library_pages_per_s": round(library_pps, 1),
        "plain_text_pages_per_s": round(pages / statistics.median(plain), 1),
        "target_ratio": TARGET_RATIO,
        "server": _server_rss(tokens["curator"], env_int("BENCH_PDF_RSS_MB", 50)),
        "target_rss_mb": TARGET_RSS_MB,
    }


def _server_rss(token: str, megabytes: int) -> dict:
    """One gunicorn worker imports a PDF of about `megabytes` MB over HTTP: its peak RSS
    (VmHWM) before and after. The extraction's child is a process of its own."""
    import requests

    text = text_pdf(20)
    data = text_pdf(20, attachment=max(0, megabytes * 1_000_000 - len(text) - 4096))
    port = _free_port()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "bench.settings"}
    command = [
        str(Path(sys.executable).parent / "gunicorn"), _wsgi_app(), "--bind",
        f"127.0.0.1:{port}", "--workers", "1", "--timeout", "120", "--log-level", "warning",
    ]  # fmt: skip
    master = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    with tempfile.NamedTemporaryFile(suffix=".pdf") as file, serving([master], [port]):
        file.write(data)
        file.flush()
        worker = _worker_of(master.pid)
        before = _hwm_mb(worker)
        with open(file.name, "rb") as upload:
            response = requests.post(
                f"http://127.0.0.1:{port}/api/v1/evidence/documents/?dimension=demo",
                headers={"Authorization": f"Token {token}"},
                files={"file": ("big.pdf", upload, "application/pdf")},
                data={"source_ref": f"https://bench.example.org/big-{time.time_ns()}.pdf"},
                timeout=300,
            )
        after = _hwm_mb(worker)
    return {
        "bytes": len(data),
        "status": response.status_code,
        "page_count": response.json().get("page_count"),
        "rss_before_mb": before,
        "peak_rss_mb": after,
    }


def _worker_of(master: int) -> int:
    """The pid of the gunicorn master's one worker (its child)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == master:
                    return int(entry.name)
        time.sleep(0.2)
    raise RuntimeError("gunicorn started no worker")


def _hwm_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return round(int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024, 1)
