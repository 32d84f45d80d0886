"""A PDF's text layer, page by page, read by PDFium in a child process held to limits.

The library is pypdfium2 (Google's PDFium, the engine of Chrome's viewer; Apache-2.0 /
BSD-3-Clause; wheels for every platform carry the compiled library): its plain text
extraction read a 200-page report in 0.2–0.4 s where the pure-Python pdfminer.six
took 28 s (README "Dependencies"), it refuses what it cannot read with an error code
(a password, a damaged file), and it says which characters have no Unicode mapping
instead of passing the font's codes off as text. Being C, a crafted file
could still crash or exhaust it, so it never runs in the server: each extraction is a
child forked from the caller (no interpreter start-up: the library is loaded once, in
the parent, before the first fork) with an address-space limit (RLIMIT_AS) and a CPU
limit, and the parent waits at most GROUNDING_PDF_EXTRACT_SECONDS before killing it.
A child that dies, overruns or runs out of memory is `extraction_failed`; the server
process never holds the document's pages, only the texts the child sends back.

The text of a page is PDFium's text layer for it, as the reading order PDFium gives,
NFC-normalized, with PDFium's CRLF line breaks written as LF and code units no
Unicode text may hold (NUL, lone surrogates) as U+FFFD. A page whose text layer is
empty, or holds nothing but characters its fonts map to no Unicode (U+FFFD) and white
space, has no usable text: it is stored as empty (`text_state: "empty"`), never
guessed.
"""

from __future__ import annotations

import contextlib
import faulthandler
import multiprocessing
import os
import resource
import time
import unicodedata
from dataclasses import dataclass
from typing import Any

from django.conf import settings

MAGIC = b"%PDF-"
EOF_MARK = b"%%EOF"
# A PDF's header is within its first 1,024 bytes and its %%EOF within its last 1,024
# (ISO 32000-1 §7.5.2 and the implementation notes every reader follows).
EDGE = 1024


class PdfRejected(Exception):
    """Bytes that are not a readable PDF; `reason` is the API's."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Extraction:
    texts: list[str]  # one per page, in page order
    extractor: str  # "<library> <version>"


def extractor_name() -> str:
    from pypdfium2.version import PDFIUM_INFO, PYPDFIUM_INFO

    return f"pypdfium2 {PYPDFIUM_INFO} (PDFium {PDFIUM_INFO.build})"


def check_edges(head: bytes, tail: bytes) -> None:
    """Refuse what is plainly no PDF (no header) or cut short (no %%EOF at the end)."""
    if MAGIC not in head[:EDGE]:
        raise PdfRejected("not_pdf", "the file does not start as a PDF (%PDF- header).")
    if EOF_MARK not in tail[-EDGE:]:
        raise PdfRejected("corrupt", "the file is truncated (no %%EOF at its end).")


def extract(source: str | bytes) -> Extraction:
    """Every page's text of the PDF at `source` (a path, or the bytes), read in a child
    process; PdfRejected when it is no readable PDF or the child fails its limits."""
    _load_library()
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(
        target=_child,
        args=(
            sender,
            source,
            settings.GROUNDING_PDF_MAX_PAGES,
            settings.GROUNDING_PDF_EXTRACT_MEMORY_BYTES,
            settings.GROUNDING_PDF_EXTRACT_SECONDS,
        ),
        daemon=True,
    )
    child.start()
    sender.close()
    try:
        answer = _receive(receiver, child, settings.GROUNDING_PDF_EXTRACT_SECONDS)
    finally:
        receiver.close()
        if child.is_alive():
            child.kill()
        child.join()
    if answer[0] == "refused":
        raise PdfRejected(answer[1], answer[2])
    return Extraction(texts=answer[1], extractor=extractor_name())


def _receive(receiver: Any, child: Any, seconds: float) -> tuple:
    failed = ("refused", "extraction_failed", "the PDF's text could not be extracted.")
    deadline = time.monotonic() + seconds
    # The child's answer, or its death (EOF), or the deadline: whichever comes first.
    if not receiver.poll(max(0.0, deadline - time.monotonic())):
        child.kill()
        return (
            "refused",
            "extraction_failed",
            f"extracting the PDF's text took longer than {seconds} s.",
        )
    try:
        return receiver.recv()
    except (EOFError, OSError, MemoryError):
        return failed


def _load_library() -> None:
    # In the parent, once: the forked children inherit the loaded library.
    import pypdfium2  # noqa: F401


def _child(sender: Any, source: str | bytes, max_pages: int, memory: int, seconds: int) -> None:
    # PDFium aborts the process when an allocation fails under the limit: expected
    # here, and not worth a traceback on the server's stderr.
    faulthandler.disable()
    try:
        _limit(memory, seconds)
        sender.send(_read(source, max_pages))
    except BaseException:  # anything at all: the parent hears a refusal, never a trace
        with contextlib.suppress(BaseException):
            sender.send(("refused", "extraction_failed", "the PDF's text could not be extracted."))
    finally:
        sender.close()
        os._exit(0)


def _limit(memory: int, seconds: int) -> None:
    # The limit is on top of what the forked child already maps (the parent's image).
    with open("/proc/self/statm") as statm:
        mapped = int(statm.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (mapped + memory, mapped + memory))
    used = int(sum(resource.getrusage(resource.RUSAGE_SELF)[:2]))
    resource.setrlimit(resource.RLIMIT_CPU, (used + seconds, used + seconds + 1))


def _read(source: str | bytes, max_pages: int) -> tuple:
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    try:
        document = pdfium.PdfDocument(source)
    except pdfium.PdfiumError as error:
        if error.err_code == raw.FPDF_ERR_PASSWORD:
            return ("refused", "encrypted", "the PDF is password-protected.")
        return ("refused", "corrupt", "the PDF is damaged and cannot be read.")
    pages = len(document)
    if pages > max_pages:
        return ("refused", "too_many_pages", f"the PDF has more than {max_pages} pages.")
    if pages == 0:
        return ("refused", "corrupt", "the PDF has no readable page.")
    texts = [_page(document, index) for index in range(pages)]
    document.close()
    return ("ok", texts)


def _page(document: Any, index: int) -> str:
    import pypdfium2.raw as raw

    page = document[index]
    textpage = page.get_textpage()
    handle, count = textpage.raw, textpage.count_chars()
    unmapped = raw.FPDFText_HasUnicodeMapError
    if any(unmapped(handle, i) for i in range(count)):
        # PDFium would fall back to the font's character codes: a guess. Characters
        # whose font maps them to no Unicode are U+FFFD instead.
        get = raw.FPDFText_GetUnicode
        text = "".join(
            "\ufffd" if unmapped(handle, i) else chr(get(handle, i)) for i in range(count)
        )
    else:
        text = textpage.get_text_range()
    textpage.close()
    page.close()
    return page_text(text)


def page_text(raw_text: str) -> str:
    """The stored text of a page from PDFium's (module docstring); '' when unusable."""
    text = raw_text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\x00", "\ufffd"))
    if not text.replace("\ufffd", "").strip():
        return ""
    return text
