"""The Gemini generateContent parser: groundingSupports segments are UTF-8 byte
offsets within one part, converted to NFC code points over the whole answer;
offsets inside a character or outside the part are skipped, never rounded. Pure:
no database."""

from __future__ import annotations

import copy
import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grounding.citations import LOCATOR_FRAGMENT, gemini
from grounding.citations.gemini import parse

FIXTURES = Path(__file__).parent / "fixtures"


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@pytest.fixture
def payload() -> dict:
    return json.loads((FIXTURES / "gemini_generate_content.json").read_text("utf-8"))


def _parts(payload: dict) -> list[dict]:
    return payload["candidates"][0]["content"]["parts"]


def test_answer_text_is_the_nfc_concatenation_of_the_text_parts_without_thoughts(payload):
    parsed = parse(payload)
    assert parsed.offenders == []
    parts = _parts(payload)
    literal = parts[1]["text"] + parts[3]["text"]  # 0 is a thought, 2 a function call
    assert parsed.answer_text == nfc(literal) != literal
    assert (len(literal), len(parsed.answer_text)) == (101, 100)


def test_byte_segments_become_nfc_code_points_over_the_whole_answer(payload):
    parsed = parse(payload)
    assert gemini.ANSWER_UNIT == "utf8"
    first, second, third = parsed.citations[:3]
    # ë, ’, 🚀 and 𝔘 precede the span in part 1: bytes 31..57 are code points 22..48.
    assert (first.answer_start, first.answer_end) == (22, 48)
    assert parsed.answer_text[22:48] == "the bridge opened in 1932."
    assert first.data["segment"] == {"start_index": 31, "end_index": 57}
    # One citation per chunk index, each with its own confidence score (data).
    assert [(c.document_key, c.data["confidence_score"]) for c in (first, second)] == [
        ("0", 0.97), ("1", 0.41),
    ]  # fmt: skip
    assert (first.container, second.container) == (
        {"support_index": 0, "chunk_position": 0}, {"support_index": 0, "chunk_position": 1},
    )  # fmt: skip
    assert first.pointer.endswith("/groundingSupports/0/groundingChunkIndices/0")
    assert first.source_selector == {"type": "FragmentSelector", "value": "locator=web",
                                     "conformsTo": LOCATOR_FRAGMENT}  # fmt: skip
    assert first.data["uri"].endswith("/AAA") and first.title == "example.org"
    # Part 3 follows part 1 in the answer; its NFD "Café" composes: 69..100.
    assert (third.answer_start, third.answer_end) == (69, 100)
    assert parsed.answer_text[69:100] == nfc("Cafe\u0301 “Brücke” 🌉 sits beside it.")
    assert third.source_selector["value"] == "locator=retrievedContext"
    assert third.data["segment_text_check"] == "match"


def test_bad_segments_are_skipped_with_their_reason_and_the_others_proceed(payload):
    reasons = [(c.container["support_index"], c.skip_reason) for c in parse(payload).citations]
    assert reasons == [
        (0, None), (0, None), (1, None),
        (2, "segment_offset_inside_character"),  # one byte into "—"
        (3, "segment_outside_part"),
        (4, "segment_part_not_text"),  # partIndex absent ⇒ 0, a thought
        (5, "segment_part_not_text"),  # a function call
        (6, "segment_part_not_found"),
        (7, None), (7, "grounding_chunk_not_found"), (7, "unsupported_citation_type"),
        (8, "no_grounding_chunks"),
    ]  # fmt: skip


def test_snake_case_fields_are_read_as_protobuf_json_parsers_do(payload):
    support = payload["candidates"][0]["groundingMetadata"]["groundingSupports"][0]
    support["grounding_chunk_indices"] = support.pop("groundingChunkIndices")
    support["segment"]["start_index"] = support["segment"].pop("startIndex")
    first = parse(payload).citations[0]
    assert (first.answer_start, first.answer_end, first.document_key) == (22, 48, "0")


def test_a_segment_text_that_disagrees_is_reported_not_used(payload):
    segment = payload["candidates"][0]["groundingMetadata"]["groundingSupports"][0]["segment"]
    segment["text"] = "something else"
    first = parse(payload).citations[0]
    assert first.skip_reason is None and (first.answer_start, first.answer_end) == (22, 48)
    assert first.data["segment_text_check"] == "mismatch"


def test_no_grounding_metadata_means_no_citations(payload):
    del payload["candidates"][0]["groundingMetadata"]
    parsed = parse(payload)
    assert parsed.offenders == [] and parsed.citations == [] and parsed.answer_text


@pytest.mark.parametrize(
    ("mutate", "pointer", "code"),
    [
        (lambda p: p.pop("candidates"), "/payload/candidates", "required"),
        (lambda p: p.update(candidates=[]), "/payload/candidates", "required"),
        (lambda p: p["candidates"][0]["content"].update(parts={}),
         "/payload/candidates/0/content/parts", "type"),
        (lambda p: _support(p, 0)["segment"].update(startIndex=-1),
         "/payload/candidates/0/groundingMetadata/groundingSupports/0/segment/startIndex", "type"),
        (lambda p: _support(p, 0)["segment"].update(endIndex=1),
         "/payload/candidates/0/groundingMetadata/groundingSupports/0/segment/endIndex", "range"),
        (lambda p: _support(p, 0).update(groundingChunkIndices=["0"]),
         "/payload/candidates/0/groundingMetadata/groundingSupports/0/groundingChunkIndices/0",
         "type"),
        (lambda p: _support(p, 0).update(confidenceScores=["high"]),
         "/payload/candidates/0/groundingMetadata/groundingSupports/0/confidenceScores/0", "type"),
        (lambda p: _support(p, 1).pop("segment"),
         "/payload/candidates/0/groundingMetadata/groundingSupports/1/segment", "required"),
    ],
)  # fmt: skip
def test_malformed_payloads_are_reported_with_pointers(payload, mutate, pointer, code):
    mutate(payload)
    assert [(o.pointer, o.code) for o in parse(payload).offenders] == [(pointer, code)]


def _support(payload: dict, i: int) -> dict:
    return payload["candidates"][0]["groundingMetadata"]["groundingSupports"][i]


# -- the property: a byte span and its code-point conversion select the same text.

ALPHABET = st.sampled_from([*"ab .é🚀𝔘—€", "e\u0301", "\u0301", "\u00e9"])
PART = st.lists(ALPHABET, max_size=12).map("".join)


@given(parts=st.lists(PART, min_size=1, max_size=4), data=st.data())
def test_a_byte_span_and_its_code_point_conversion_select_the_same_text(parts, data):
    part = data.draw(st.integers(0, len(parts) - 1))
    size = len(parts[part].encode("utf-8"))
    start = data.draw(st.integers(0, size + 2))
    end = data.draw(st.integers(start, size + 2))
    payload = {
        "candidates": [{
            "content": {"parts": [{"text": t} for t in parts]},
            "groundingMetadata": {
                "groundingChunks": [{"web": {"uri": "https://example.org/"}}],
                "groundingSupports": [{
                    "segment": {"partIndex": part, "startIndex": start, "endIndex": end},
                    "groundingChunkIndices": [0],
                }],
            },
        }]
    }  # fmt: skip
    parsed = parse(copy.deepcopy(payload))
    assert parsed.offenders == []
    (citation,) = parsed.citations
    raw = parts[part].encode("utf-8")
    if end > size:
        assert citation.skip_reason == "segment_outside_part"
        return
    try:
        selected = raw[start:end].decode("utf-8")
        on_boundaries = raw[:start].decode("utf-8") + selected == raw[:end].decode("utf-8")
    except UnicodeDecodeError:
        on_boundaries = False
    if not on_boundaries:
        assert citation.skip_reason == "segment_offset_inside_character"
        return
    if citation.skip_reason == "answer_span_not_convertible":
        # Inside a sequence NFC composes: no code-point span exists, none is made.
        literal = "".join(parts)
        a = sum(len(t) for t in parts[:part]) + len(raw[:start].decode("utf-8"))
        b = a + len(selected)
        assert nfc(literal[:a]) + nfc(literal[a:b]) + nfc(literal[b:]) != nfc(literal)
        return
    span = parsed.answer_text[citation.answer_start : citation.answer_end]
    assert span == nfc(selected)
    assert citation.skip_reason == ("empty_answer_span" if not selected else None)
