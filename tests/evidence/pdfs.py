"""PDFs made by the suite (nothing downloaded): text PDFs by fpdf2, and hostile ones
written object by object, so each names exactly the flaw it carries."""

from __future__ import annotations

import zlib
from functools import cache

from fpdf import FPDF


def text_pdf(pages: list[str], *, title: str | None = None, password: str | None = None) -> bytes:
    """One page per text (an empty text: a page with no text layer)."""
    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    if title:
        pdf.set_title(title)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 6, text)
    if password is not None:
        pdf.set_encryption(owner_password="owner-" + password, user_password=password)
    return bytes(pdf.output())


def page_citation(
    cited_text: str | None, pages: tuple[int, int] | None = (1, 2), kind: str = "page_location"
) -> dict:
    """An Anthropic citation of document 0 (`page_location` by default, over the pages
    [start, end)); `cited_text` None leaves it out."""
    citation = {"type": kind, "document_index": 0, "document_title": "Annual report"}
    if cited_text is not None:
        citation["cited_text"] = cited_text
    if kind == "page_location":
        citation["start_page_number"], citation["end_page_number"] = pages
    else:
        citation["start_char_index"], citation["end_char_index"] = 0, 5
    return citation


def citing_body(
    world, document_id: str, *citations: dict, answer: str = "urn:answer:pdf@1"
) -> dict:
    """A from-citations request (an Anthropic message) whose document 0 is the PDF
    document: one sentence a citation."""
    return {
        "dimension": world.dimension.name,
        "profile": world.profile.ref,
        "answer_revision_ref": answer,
        "format": "anthropic-messages",
        "payload": {
            "type": "message",
            "role": "assistant",
            "content": [
                {"type": "text", "text": f"Claim {i}. ", "citations": [c]}
                for i, c in enumerate(citations)
            ],
        },
        "passages": {"0": {"document_id": document_id}},
    }


@cache
def report_pdf() -> bytes:
    """Three pages: the quote on page 2 once, a repeated phrase, and a sentence that runs
    across the break from page 2 to page 3."""
    return text_pdf(
        [
            "Annual report 2025. Revenue grew in every region. See the appendix.",
            "The bridge opened in 1932 after four years of work. See the appendix. "
            "Maintenance of the span continued",
            "through the winter of 1933. See the appendix.",
        ],
        title="Annual report",
    )


def raw_pdf(objects: list[bytes], *, root: int = 1, trailer_extra: bytes = b"") -> bytes:
    """A PDF of these objects (numbered from 1) with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root %d 0 R %s>>\n" % (len(objects) + 1, root, trailer_extra)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def _stream(data: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s>>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def page_tree_loop_pdf() -> bytes:
    """The page tree's only kid is the tree itself."""
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
            b"<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 1 >>",
        ]
    )


def bomb_pdf(megabytes: int = 2048) -> bytes:
    """One page whose content stream inflates to `megabytes` MiB of spaces: the same
    fully flushed deflate block over and over (each independent), so making it costs
    a few milliseconds."""
    chunk = b" " * (1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    adler = 1
    for _ in range(megabytes):
        adler = zlib.adler32(chunk, adler)
    body = (
        b"\x78\xda" + block * megabytes + compressor.flush(zlib.Z_FINISH) + adler.to_bytes(4, "big")
    )
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            _stream(body, b"/Filter /FlateDecode "),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
    )


def unmapped_font_pdf() -> bytes:
    """One page drawn with a Type 3 font whose glyph names map to no Unicode and which
    has no ToUnicode map: the shapes are there, the characters are not."""
    glyph = _stream(b"1000 0 0 0 750 750 d1 0 0 750 750 re f")
    content = _stream(b"BT /F1 24 Tf 72 700 Td (ABCABC) Tj ET")
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            content,
            b"<< /Type /Font /Subtype /Type3 /FontBBox [0 0 750 750] "
            b"/FontMatrix [0.001 0 0 0.001 0 0] /CharProcs << /g1x 6 0 R /g2x 6 0 R "
            b"/g3x 6 0 R >> /Encoding << /Type /Encoding /Differences [65 /g1x /g2x /g3x] >> "
            b"/FirstChar 65 /LastChar 67 /Widths [1000 1000 1000] /Resources << >> >>",
            glyph,
        ]
    )


def many_pages_pdf(count: int) -> bytes:
    return text_pdf([f"page {n}" for n in range(1, count + 1)])
