"""The OpenAI Responses parser: output_text annotations give answer-side spans
(converted to NFC code points over the concatenated output text), the source side
is only a locator. Pure: no database."""

from __future__ import annotations

import copy
import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evidence.offsets import codepoint_to_utf16
from grounding.citations import LOCATOR_FRAGMENT, openai
from grounding.citations.openai import parse

FIXTURES = Path(__file__).parent / "fixtures"


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@pytest.fixture
def payload() -> dict:
    return json.loads((FIXTURES / "openai_responses.json").read_text("utf-8"))


def _texts(payload: dict) -> list[str]:
    return [p["text"] for item in payload["output"] if item["type"] == "message"
            for p in item["content"] if p["type"] == "output_text"]  # fmt: skip


def test_answer_text_is_the_nfc_concatenation_of_output_text(payload):
    parsed = parse(payload)
    assert parsed.offenders == []
    literal = "".join(_texts(payload))
    assert parsed.answer_text == nfc(literal) != literal
    assert len(literal) == 233 and len(parsed.answer_text) == 232


def test_url_citation_spans_are_converted_and_offset_by_the_item(payload):
    first, _, third = parse(payload).citations
    assert openai.ANSWER_UNIT == "codepoint"
    # ë, ’, 🚀 and 𝔘 precede the span: one code point each.
    assert (first.index, first.container) == (0, {"output_index": 1, "content_index": 0})
    assert (first.answer_start, first.answer_end) == (48, 109)
    assert first.document_key == "https://example.org/bridge?utm_source=openai"
    assert first.title == "Bridge history"
    assert first.source_raw_span is None
    assert first.source_selector == {
        "type": "FragmentSelector", "value": "locator=url_citation", "conformsTo": LOCATOR_FRAGMENT
    }  # fmt: skip
    # Second message item, after an NFD "Café": raw 161..232 is NFC 160..231.
    assert (third.container, third.answer_start, third.answer_end) == (
        {"output_index": 3, "content_index": 0}, 160, 231,
    )  # fmt: skip
    parsed = parse(payload)
    annotation = payload["output"][3]["content"][0]["annotations"][1]
    raw = payload["output"][3]["content"][0]["text"]
    expected = nfc(raw[annotation["start_index"] : annotation["end_index"]])
    assert parsed.answer_text[160:231] == expected


def test_file_citation_is_a_point_inside_the_whole_output_text(payload):
    second = parse(payload).citations[1]
    assert second.type == "file_citation"
    assert second.document_key == "file-2dtbBZdjtDKS8eqWxqbgDi"
    assert second.title == "café-handbook.pdf"
    assert (second.answer_start, second.answer_end) == (111, 232)
    assert second.answer_marker == 143  # raw index 33 in an item that starts with NFD "Café"
    assert parse(payload).answer_text[111:143].endswith("tours run daily.")


def test_utf16_offsets_are_converted_when_the_client_says_so(payload):
    part = payload["output"][1]["content"][0]
    annotation = part["annotations"][0]
    for key in ("start_index", "end_index"):
        annotation[key] = codepoint_to_utf16(part["text"], annotation[key])
    assert (annotation["start_index"], annotation["end_index"]) == (50, 111)
    first = parse(payload, offset_unit="utf16").citations[0]
    assert (first.answer_start, first.answer_end) == (48, 109)


def test_an_offset_inside_a_surrogate_pair_is_refused_with_its_pointer(payload):
    part = payload["output"][1]["content"][0]
    part["annotations"][0]["start_index"] = codepoint_to_utf16(part["text"], 6) + 1  # inside 🚀
    offenders = parse(payload, offset_unit="utf16").offenders
    assert [(o.pointer, o.code) for o in offenders] == [
        ("/payload/output/1/content/0/annotations/0/start_index", "offset")
    ]


@pytest.mark.parametrize(
    ("mutate", "pointer", "code"),
    [
        (lambda p: p.pop("output"), "/payload/output", "required"),
        (lambda p: p.update(object="chat.completion"), "/payload/object", "enum"),
        (lambda p: p["output"][1].update(content=None), "/payload/output/1/content", "required"),
        (lambda p: p["output"][1]["content"][0].update(text=None),
         "/payload/output/1/content/0/text", "required"),
        (lambda p: p["output"][1]["content"][0]["annotations"][0].update(end_index=10**6),
         "/payload/output/1/content/0/annotations/0/end_index", "offset"),
        (lambda p: p["output"][1]["content"][0]["annotations"][0].update(end_index=1),
         "/payload/output/1/content/0/annotations/0/end_index", "range"),
        (lambda p: p["output"][3]["content"][0]["annotations"][0].pop("file_id"),
         "/payload/output/3/content/0/annotations/0/file_id", "required"),
        (lambda p: p["output"][3]["content"][0]["annotations"][0].update(index=-1),
         "/payload/output/3/content/0/annotations/0/index", "minimum"),
    ],
)  # fmt: skip
def test_malformed_payloads_are_reported_with_pointers(payload, mutate, pointer, code):
    broken = copy.deepcopy(payload)
    mutate(broken)
    assert (pointer, code) in [(o.pointer, o.code) for o in parse(broken).offenders]


def test_other_annotation_kinds_are_skipped_with_a_reason(payload):
    payload["output"][1]["content"][0]["annotations"].append(
        {"type": "file_path", "file_id": "file-abc", "index": 3}
    )
    parsed = parse(payload)
    assert parsed.offenders == []
    assert parsed.citations[1].skip_reason == "unsupported_citation_type"


# -- property: provider offsets converted, then NFC-sliced, equal NFC of the provider slice.

# Composing, combining, astral, flag, singleton (Å ⇒ Å), Hangul jamo and
# decomposing-only (U+0344, U+0F73) characters.
ALPHABET = st.sampled_from(
    [
        *"abcAé ",
        "e\u0301",
        "\u0301",
        "\u0308",
        "\U0001f600",
        "\U0001d518",
        "\U0001f1e9\U0001f1ea",
        "\u00c5",
        "\u212b",
        "\u1100\u1161",
        "\ufb01",
        "\u0344",
        "\u0f73",
    ]
)


@st.composite
def text_and_span(draw):
    pieces = draw(st.lists(ALPHABET, min_size=1, max_size=12))
    prefix = "".join(pieces[: draw(st.integers(0, len(pieces)))])
    text = "".join(pieces)
    start = draw(st.integers(0, len(text)))
    end = draw(st.integers(start, len(text)))
    return prefix, text, start, end


@given(text_and_span(), st.sampled_from(["codepoint", "utf16"]))
def test_converted_offsets_slice_the_nfc_text_like_the_provider_slice(case, unit):
    prefix, text, start, end = case
    payload = {"output": [{"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": prefix, "annotations": []},
        {"type": "output_text", "text": text, "annotations": [{
            "type": "url_citation", "url": "https://example.org/", "title": "t",
            "start_index": start if unit == "codepoint" else codepoint_to_utf16(text, start),
            "end_index": end if unit == "codepoint" else codepoint_to_utf16(text, end),
        }]},
    ]}]}  # fmt: skip
    parsed = parse(payload, offset_unit=unit)
    assert parsed.offenders == []
    (citation,) = parsed.citations
    if citation.skip_reason == "answer_span_not_convertible":
        return  # the offset splits a sequence NFC composes: refused, never rounded
    sliced = parsed.answer_text[citation.answer_start : citation.answer_end]
    assert sliced == nfc(text[start:end])
    assert parsed.answer_text[: citation.answer_start] == nfc(prefix + text[:start])


@given(st.text(st.characters(codec="utf-8"), max_size=30).map(nfc), st.data())
def test_offsets_over_nfc_text_always_convert_to_themselves(text, data):
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    payload = {"output": [{"type": "message", "content": [{"type": "output_text", "text": text,
               "annotations": [{"type": "url_citation", "url": "u", "start_index": start,
                                "end_index": end}]}]}]}  # fmt: skip
    (citation,) = parse(payload).citations
    if nfc(text[:start]) + nfc(text[start:]) == text and nfc(text[:end]) + nfc(text[end:]) == text:
        assert (citation.answer_start, citation.answer_end) == (start, end)
