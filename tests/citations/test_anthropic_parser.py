"""The Anthropic Messages parser: answer spans in NFC code points over the
concatenated text blocks, source locators per citation type, offenders with
pointers for a malformed shape. Pure: no database."""

from __future__ import annotations

import copy
import json
import unicodedata
from pathlib import Path

import pytest

from grounding.citations import BLOCK_FRAGMENT, PDF_FRAGMENT, anthropic, span_to_nfc
from grounding.citations.anthropic import parse

FIXTURES = Path(__file__).parent / "fixtures"


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@pytest.fixture
def payload() -> dict:
    return json.loads((FIXTURES / "anthropic_messages.json").read_text("utf-8"))


@pytest.fixture
def documents() -> list[str]:
    docs = json.loads((FIXTURES / "anthropic_documents.json").read_text("utf-8"))["documents"]
    return [d["data"] for d in docs]


def test_answer_text_is_the_nfc_concatenation_of_the_text_blocks(payload):
    parsed = parse(payload)
    assert parsed.offenders == []
    literal = "".join(b["text"] for b in payload["content"] if b["type"] == "text")
    assert literal != nfc(literal)  # the fixture carries an NFD block
    assert parsed.answer_text == nfc(literal)
    assert len(parsed.answer_text) == 209


def test_each_citation_spans_its_text_block_in_nfc_code_points(payload):
    parsed = parse(payload)
    spans = [(c.index, c.container["block_index"], c.answer_start, c.answer_end)
             for c in parsed.citations]  # fmt: skip
    # Astral characters (🚀, 𝔘) before block 1 count one code point each; the NFD
    # "café" of block 2 shortens everything after it by one.
    assert spans == [
        (0, 1, 27, 52),
        (1, 3, 74, 88),
        (2, 4, 88, 118),
        (3, 5, 118, 145),
        (4, 6, 145, 168),
        (5, 7, 168, 191),
        (6, 8, 191, 208),
        (7, 8, 191, 208),
    ]
    for c in parsed.citations:
        block = payload["content"][c.container["block_index"]]["text"]
        assert parsed.answer_text[c.answer_start : c.answer_end] == nfc(block)


def test_char_location_keeps_provider_offsets_for_the_service_to_convert(payload, documents):
    first, second = parse(payload).citations[:2]
    assert first.type == "char_location"
    assert first.document_key == "0"
    assert first.source_raw_span == (44, 70)
    assert first.source_unit == anthropic.SOURCE_UNIT == "codepoint"
    assert first.title == "Bridge history"
    # Astral characters before the span on the source side: code points, unchanged.
    start, end = span_to_nfc(documents[0], 44, 70, "codepoint")
    assert (start, end) == (44, 70)
    assert nfc(documents[0])[start:end] == nfc(first.cited_text)
    # The NFD document: provider offsets 12..37 are NFC offsets 10..34.
    assert second.source_raw_span == (12, 37)
    start, end = span_to_nfc(documents[1], 12, 37, "codepoint")
    assert (start, end) == (10, 34)
    assert nfc(documents[1])[start:end] == nfc(second.cited_text) == "The café opened in 1901."


def test_page_block_and_search_locations_become_fragment_or_quote_selectors(payload):
    c = parse(payload).citations
    assert c[2].source_selector == {
        "type": "RangeSelector",
        "startSelector": {
            "type": "FragmentSelector",
            "value": "page=3",
            "conformsTo": PDF_FRAGMENT,
        },
        "endSelector": {"type": "FragmentSelector", "value": "page=5", "conformsTo": PDF_FRAGMENT},
    }
    assert c[3].source_selector == {
        "type": "FragmentSelector", "value": "block=1-2", "conformsTo": BLOCK_FRAGMENT
    }  # fmt: skip
    assert c[6].document_key == "https://example.org/tours"
    assert c[6].source_selector == {
        "type": "TextQuoteSelector",
        "exact": "Guided tours of the bridge run daily at 10:00.",
    }
    assert c[7].document_key == "https://kb.example.org/tours"
    assert c[7].source_selector["value"] == "block=0-1"
    assert all(x.source_raw_span is None for x in c[2:4] + c[6:])


def test_a_single_page_is_one_pdf_fragment(payload):
    payload["content"][4]["citations"][0].update(start_page_number=3, end_page_number=4)
    selector = parse(payload).citations[2].source_selector
    assert selector == {"type": "FragmentSelector", "value": "page=3", "conformsTo": PDF_FRAGMENT}


def test_utf16_offset_unit_is_converted_explicitly(payload, documents):
    # The same span counted in UTF-16 code units: 📜 and 𝔘 are two units each.
    citation = payload["content"][1]["citations"][0]
    citation.update(start_char_index=46, end_char_index=72)
    first = parse(payload, offset_unit="utf16").citations[0]
    assert first.source_unit == "utf16"
    assert span_to_nfc(documents[0], *first.source_raw_span, "utf16") == (44, 70)


def test_unknown_citation_type_is_skipped_not_refused(payload):
    payload["content"][1]["citations"].append({"type": "future_location", "document_index": 0})
    parsed = parse(payload)
    assert parsed.offenders == []
    extra = parsed.citations[1]
    assert (extra.type, extra.skip_reason) == ("future_location", "unsupported_citation_type")


def test_a_block_boundary_inside_a_composed_character_is_not_rounded():
    payload = {
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "text", "text": "cafe"},
            {"type": "text", "text": "\u0301 is open", "citations": [
                {"type": "content_block_location", "cited_text": "x", "document_index": 0,
                 "document_title": None, "start_block_index": 0, "end_block_index": 1}]},
        ],
    }  # fmt: skip
    parsed = parse(payload)
    assert parsed.answer_text == "café is open"
    assert parsed.citations[0].skip_reason == "answer_span_not_convertible"


def test_non_text_blocks_are_not_answer_text(payload):
    tool_use = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                "input": {"query": "bridge"}}  # fmt: skip
    payload["content"].insert(0, tool_use)
    parsed = parse(payload)
    assert len(parsed.answer_text) == 209
    assert parsed.citations[0].container == {"block_index": 2}


@pytest.mark.parametrize(
    ("mutate", "pointer", "code"),
    [
        (lambda p: p.update(content="nope"), "/payload/content", "type"),
        (lambda p: p.pop("content"), "/payload/content", "required"),
        (lambda p: p.update(role="user"), "/payload/role", "enum"),
        (lambda p: p["content"][1].update(text=7), "/payload/content/1/text", "type"),
        (lambda p: p["content"][1].update(citations={}), "/payload/content/1/citations", "type"),
        (lambda p: p["content"][1]["citations"][0].pop("start_char_index"),
         "/payload/content/1/citations/0/start_char_index", "required"),
        (lambda p: p["content"][1]["citations"][0].update(end_char_index=3),
         "/payload/content/1/citations/0/end_char_index", "range"),
        (lambda p: p["content"][1]["citations"][0].update(document_index="0"),
         "/payload/content/1/citations/0/document_index", "type"),
        (lambda p: p["content"][4]["citations"][0].update(start_page_number=0),
         "/payload/content/4/citations/0/start_page_number", "minimum"),
        (lambda p: p["content"][8]["citations"][0].pop("url"),
         "/payload/content/8/citations/0/url", "required"),
        (lambda p: p["content"][8]["citations"].append("x"),
         "/payload/content/8/citations/2", "type"),
    ],
)  # fmt: skip
def test_malformed_payloads_are_reported_with_pointers(payload, mutate, pointer, code):
    broken = copy.deepcopy(payload)
    mutate(broken)
    offenders = parse(broken).offenders
    assert (pointer, code) in [(o.pointer, o.code) for o in offenders]


def test_a_payload_that_is_not_an_object_is_one_offender():
    assert [(o.pointer, o.code) for o in parse([1]).offenders] == [("/payload", "type")]
