"""The crw parsers: extraction Basis items under the FieldStatus contract, search
SourceEvidence highlights with offsets into crw's normalized markdown. Pure: no
database."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from grounding.citations import (
    JSON_POINTER_FRAGMENT,
    LOCATOR_FRAGMENT,
    crw_extract,
    crw_search,
)

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text("utf-8"))


@pytest.fixture
def extract() -> dict:
    return load("crw_extract.json")


@pytest.fixture
def search() -> dict:
    return load("crw_search.json")


def test_every_status_becomes_a_citation_or_a_reported_skip(extract):
    parsed = crw_extract.parse(extract)
    assert parsed.offenders == [] and parsed.media_type == "application/json"
    by_field = {c.data["field"]: c for c in parsed.citations}
    assert [c.type for c in parsed.citations] == [b["status"] for b in extract["basis"]]

    opened = by_field["opened"]
    assert (opened.pointer, opened.container) == ("/payload/basis/0", {"basis_index": 0})
    assert opened.statement_pointer == "/opened" and opened.proposition == "opened = 1932"
    assert opened.source_selector == {"type": "TextQuoteSelector",
                                      "exact": "the bridge opened in 1932."}  # fmt: skip
    assert opened.resolve and opened.support_kind == "quotation"
    assert (opened.source_text_kind, opened.source_hash[:7]) == ("llmInput", "sha256:")
    assert opened.data["confidence"] == "high"  # data, never a verdict
    assert opened.document_key == "https://example.org/ulm-bridge"
    assert by_field["price"].proposition == 'price = "€19.99"'

    tours = by_field["tours"]
    assert not tours.resolve and tours.support_kind is None and tours.skip_reason is None
    assert tours.source_selector == {"type": "FragmentSelector",
                                     "value": "locator=crw_evidence_citation",
                                     "conformsTo": LOCATOR_FRAGMENT}  # fmt: skip
    assert (by_field["rating"].skip_reason, by_field["rating"].document_key) == (
        "basis_unsupported", None,
    )  # fmt: skip
    assert by_field["closing"].skip_reason == "basis_not_found"
    assert by_field["closing"].proposition == "closing = null"


def test_field_names_are_escaped_json_pointers():
    basis = {"basisVersion": 1, "field": "a/b~c d", "value": "x", "status": "unsupported",
             "citations": []}  # fmt: skip
    (citation,) = crw_extract.parse({"basis": [basis]}).citations
    assert citation.statement_pointer == "/a~1b~0c%20d"
    assert JSON_POINTER_FRAGMENT == "http://tools.ietf.org/rfc/rfc6901"


def _basis(extract: dict, i: int) -> dict:
    return extract["basis"][i]


VIOLATIONS = [
    # (mutation, pointer, code): one per row and column of the FieldStatus table.
    (lambda b: b[0].pop("value"), "/payload/basis/0/value", "required"),
    (lambda b: b[0].pop("citations"), "/payload/basis/0/citations", "required"),
    (lambda b: b[0].update(value=None), "/payload/basis/0/value", "basis_contract"),
    (lambda b: b[0].update(citations=[]), "/payload/basis/0/citations", "basis_contract"),
    (lambda b: b[0]["citations"].append(copy.deepcopy(b[0]["citations"][0])),
     "/payload/basis/0/citations", "basis_contract"),
    (lambda b: b[0]["citations"][0].pop("excerpt"), "/payload/basis/0/citations/0/excerpt",
     "basis_contract"),
    (lambda b: b[0]["citations"][0].update(excerpt=""), "/payload/basis/0/citations/0/excerpt",
     "basis_contract"),
    (lambda b: b[5].update(value=None), "/payload/basis/5/value", "basis_contract"),
    (lambda b: b[5].update(citations=[]), "/payload/basis/5/citations", "basis_contract"),
    (lambda b: b[5]["citations"][0].update(excerpt="x"), "/payload/basis/5/citations/0/excerpt",
     "basis_contract"),
    (lambda b: b[6].update(value=None), "/payload/basis/6/value", "basis_contract"),
    (lambda b: b[6].update(citations=copy.deepcopy(b[5]["citations"])),
     "/payload/basis/6/citations", "basis_contract"),
    (lambda b: b[7].update(value=0), "/payload/basis/7/value", "basis_contract"),
    (lambda b: b[7].update(citations=copy.deepcopy(b[5]["citations"])),
     "/payload/basis/7/citations", "basis_contract"),
    (lambda b: b[7].pop("value"), "/payload/basis/7/value", "required"),
    (lambda b: b[1].update(basisVersion=2), "/payload/basis/1/basisVersion", "unsupported_version"),
    (lambda b: b[1].update(basisVersion="1"), "/payload/basis/1/basisVersion",
     "unsupported_version"),
    (lambda b: b[1].pop("basisVersion"), "/payload/basis/1/basisVersion", "required"),
    (lambda b: b[1].update(status="partial"), "/payload/basis/1/status", "enum"),
    (lambda b: b[1].update(status="not_found"), "/payload/basis/1/status", "enum"),
    (lambda b: b[1].pop("field"), "/payload/basis/1/field", "required"),
    (lambda b: b[2].update(field="opened"), "/payload/basis/2/field", "duplicate"),
    (lambda b: b[1].update(value={"amount": 19.99}), "/payload/basis/1/value", "type"),
    (lambda b: b[1].update(confidence="certain"), "/payload/basis/1/confidence", "enum"),
    (lambda b: b[1]["citations"][0].pop("url"), "/payload/basis/1/citations/0/url", "required"),
    (lambda b: b[1]["citations"][0].pop("sourceHash"), "/payload/basis/1/citations/0/sourceHash",
     "required"),
    (lambda b: b[1]["citations"][0].pop("sourceTextKind"),
     "/payload/basis/1/citations/0/sourceTextKind", "required"),
    (lambda b: b[1]["citations"][0].update(charStart=3),
     "/payload/basis/1/citations/0/charStart", "basis_contract"),
    (lambda b: b[1].update(citations={"url": "x"}), "/payload/basis/1/citations", "type"),
    (lambda b: b.__setitem__(3, "supported"), "/payload/basis/3", "type"),
]  # fmt: skip


@pytest.mark.parametrize(("mutate", "pointer", "code"), VIOLATIONS)
def test_every_contract_violation_is_an_offender_at_its_basis_item(extract, mutate, pointer, code):
    mutate(extract["basis"])
    parsed = crw_extract.parse(extract)
    assert [(o.pointer, o.code) for o in parsed.offenders] == [(pointer, code)]


def test_basis_must_be_a_list(extract):
    assert [o.pointer for o in crw_extract.parse({"data": {}}).offenders] == ["/payload/basis"]
    assert crw_extract.parse([]).offenders[0].pointer == "/payload"


def test_search_highlights_become_citations_over_the_whole_answer(search):
    parsed = crw_search.parse(search)
    assert parsed.offenders == []
    assert crw_search.SOURCE_UNIT == "codepoint"
    assert parsed.answer_text == search["answer"] and len(parsed.answer_text) == 64
    first = parsed.citations[0]
    assert (first.type, first.container) == ("highlight", {"source_index": 0, "highlight_index": 0})
    assert (first.answer_start, first.answer_end) == (0, 64)
    assert (first.source_raw_span, first.source_space) == ((29, 55), "crw-markdown")
    assert first.cited_text == "the bridge opened in 1932."
    assert (first.source_text_kind, first.data["score"]) == ("markdown", 0.91)
    assert first.mismatch_reason == "highlight_text_mismatch"
    assert parsed.citations[1].source_hash is None
    no_highlights = [c for c in parsed.citations if c.type == "source"]
    assert [(c.container, c.skip_reason, c.document_key) for c in no_highlights] == [
        ({"source_index": 2}, "no_highlights", "https://news.example/ulm")
    ]
    assert len(parsed.citations) == 10


def test_an_empty_highlight_list_is_no_highlights_and_an_empty_span_is_skipped(search):
    search["sources"][2]["highlights"] = []
    search["sources"][1]["highlights"][0]["charEnd"] = 40
    parsed = crw_search.parse(search)
    reasons = {c.container.get("source_index"): c.skip_reason for c in parsed.citations
               if c.skip_reason}  # fmt: skip
    assert reasons[2] == "no_highlights" and reasons[1] == "empty_source_span"


@pytest.mark.parametrize(
    ("mutate", "pointer", "code"),
    [
        (lambda p: p.pop("answer"), "/payload/answer", "required"),
        (lambda p: p.update(sources={}), "/payload/sources", "type"),
        (lambda p: p["sources"][0].pop("url"), "/payload/sources/0/url", "required"),
        (lambda p: p["sources"][0].pop("position"), "/payload/sources/0/position", "required"),
        (lambda p: p["sources"][0]["highlights"][1].update(score="high"),
         "/payload/sources/0/highlights/1/score", "type"),
        (lambda p: p["sources"][0]["highlights"][1].update(charStart=-1),
         "/payload/sources/0/highlights/1/charStart", "minimum"),
        (lambda p: p["sources"][0]["highlights"][1].update(charEnd=1),
         "/payload/sources/0/highlights/1/charEnd", "range"),
        (lambda p: p["sources"][0]["highlights"][1].pop("text"),
         "/payload/sources/0/highlights/1/text", "required"),
    ],
)  # fmt: skip
def test_a_malformed_search_payload_is_refused_with_pointers(search, mutate, pointer, code):
    mutate(search)
    assert [(o.pointer, o.code) for o in crw_search.parse(search).offenders] == [(pointer, code)]
