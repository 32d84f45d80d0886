"""Each provider payload of from-citations as its parser (grounding.citations) reads
it: the members it requires, their types and bounds, one builder per `format`
(`PAYLOADS`). Each builder mirrors one parser and changes with it; its asserts tie
it to the parser's own vocabulary (supported types, statuses), so a parser that
learns a type the description does not state fails the description's build.

What JSON Schema cannot state of a payload (an offset inside its text, an end before
its start, a crw basis field given twice) is listed in tests/schemathesis_run/hooks.py
as a rule beyond the schema.
"""

from __future__ import annotations

from typing import Any

from grounding.api.openapi_json import (
    ANY_JSON,
    COMPONENTS,
    INDEX,
    NO_NUL,
    NONEMPTY,
    OPTIONAL_TEXT,
    PAGE,
    TEXT,
    array,
    named,
    named_or_null,
    open_object,
    typed_object,
    when,
)
from grounding.choices import CITATION_FORMATS
from grounding.citations import anthropic, crw_extract, crw_search, gemini, openai

# -- anthropic-messages: text blocks and their citations


def _anthropic_citation() -> dict[str, Any]:
    document = {"document_index": INDEX, "document_title": OPTIONAL_TEXT}
    blocks = {"start_block_index": INDEX, "end_block_index": INDEX}
    rows = {
        "char_location": (
            {**document, "start_char_index": INDEX, "end_char_index": INDEX},
            ["document_index", "start_char_index", "end_char_index"],
        ),
        "page_location": (
            {**document, "start_page_number": PAGE, "end_page_number": PAGE},
            ["document_index", "start_page_number", "end_page_number"],
        ),
        "content_block_location": (
            {**document, **blocks},
            ["document_index", "start_block_index", "end_block_index"],
        ),
        "web_search_result_location": ({"url": NONEMPTY, "title": OPTIONAL_TEXT}, ["url"]),
        "search_result_location": (
            {"source": NONEMPTY, "title": OPTIONAL_TEXT, "search_result_index": INDEX, **blocks},
            ["source", "search_result_index", "start_block_index", "end_block_index"],
        ),
    }
    assert set(rows) == set(anthropic.SUPPORTED_TYPES)
    branches = [
        when(
            "type",
            kind,
            {"properties": {"cited_text": OPTIONAL_TEXT, **members}, "required": required},
        )
        for kind, (members, required) in rows.items()
    ]
    return typed_object(branches, kind=NONEMPTY)


def _anthropic() -> dict[str, Any]:
    text_block = {
        "properties": {
            "text": TEXT,
            "citations": array(named("AnthropicCitation", _anthropic_citation()), nullable=True),
        },
        "required": ["text"],
    }
    block = typed_object([when("type", "text", text_block)], kind=TEXT)
    return open_object(
        {
            "type": {"type": "string", "const": "message"},
            "role": {"type": "string", "const": "assistant"},
            "content": array(block),
        },
        ["content"],
    )


# -- openai-responses: output_text parts of assistant messages, their annotations


def _openai() -> dict[str, Any]:
    rows = {
        "url_citation": (
            {"url": NONEMPTY, "title": OPTIONAL_TEXT, "start_index": INDEX, "end_index": INDEX},
            ["url", "start_index", "end_index"],
        ),
        "file_citation": (
            {"file_id": NONEMPTY, "filename": OPTIONAL_TEXT, "index": INDEX},
            ["file_id", "index"],
        ),
    }
    assert set(rows) == set(openai.SUPPORTED_TYPES)
    annotation = typed_object(
        [
            when("type", kind, {"properties": members, "required": required})
            for kind, (members, required) in rows.items()
        ],
        kind=NONEMPTY,
    )
    output_text = {
        "properties": {
            "text": TEXT,
            "annotations": array(named("OpenaiAnnotation", annotation), nullable=True),
        },
        "required": ["text"],
    }
    part = typed_object([when("type", "output_text", output_text)], kind=TEXT)
    # An assistant's message (a message without a role is one); others are not read.
    message = when(
        "type",
        "message",
        {"properties": {"content": array(part)}, "required": ["content"]},
        role={"const": "assistant"},
    )
    return open_object(
        {
            "object": {"type": "string", "const": "response"},
            "output": array(typed_object([message], kind=TEXT)),
        },
        ["output"],
    )


# -- gemini-generate-content: the first candidate's parts and groundingMetadata


def _camel_and_snake(members: dict[str, Any]) -> dict[str, Any]:
    """Each member under its JSON (lowerCamel) name and its proto (snake_case) name,
    both of which the parser reads."""
    return {
        **members,
        **{gemini._snake(name): schema for name, schema in members.items()},
    }


def _gemini() -> dict[str, Any]:
    optional_index = {"type": ["integer", "null"], "minimum": 0}
    segment = open_object(
        _camel_and_snake(
            {
                "partIndex": optional_index,
                "startIndex": optional_index,
                "endIndex": optional_index,
                "text": OPTIONAL_TEXT,
            }
        )
    )
    support = open_object(
        _camel_and_snake(
            {
                "segment": segment,
                "groundingChunkIndices": array(INDEX, nullable=True),
                "confidenceScores": array({"type": "number"}, nullable=True),
            }
        ),
        ["segment"],
    )
    metadata = open_object(
        _camel_and_snake(
            {
                "groundingChunks": array(ANY_JSON, nullable=True),
                "groundingSupports": array(named("GeminiSupport", support), nullable=True),
            }
        ),
    )
    part = open_object({"text": OPTIONAL_TEXT})
    content = open_object({"parts": array(named("GeminiPart", part), nullable=True)})
    # Either may be null (read as empty).
    COMPONENTS.update(GeminiContent=content, GeminiGroundingMetadata=metadata)
    candidate = open_object(
        _camel_and_snake(
            {
                "content": named_or_null("GeminiContent"),
                "groundingMetadata": named_or_null("GeminiGroundingMetadata"),
            }
        )
    )
    # Only the first candidate is read; the others are the provider's.
    candidates = {"type": "array", "minItems": 1, "prefixItems": [candidate], "items": ANY_JSON}
    return open_object({"candidates": candidates}, ["candidates"])


# -- crw-extract: basis items and their FieldStatus contract


def _crw_extract() -> dict[str, Any]:
    citation = open_object(
        {
            "url": NONEMPTY,
            "sourceHash": NONEMPTY,
            "sourceTextKind": NONEMPTY,
            "title": OPTIONAL_TEXT,
            "excerpt": OPTIONAL_TEXT,
            # Basis v1 carries no offsets.
            "charStart": {"type": "null"},
            "charEnd": {"type": "null"},
        },
        ["url", "sourceHash", "sourceTextKind"],
    )
    scalar = {"type": ["string", "number", "boolean"], "pattern": NO_NUL}
    # The FieldStatus table (crw_extract's docstring), row by row.
    one_citation = {"type": "array", "minItems": 1, "maxItems": 1}
    none = {"type": "array", "maxItems": 0}
    contract = [
        when(
            "status",
            "supported",
            {
                "properties": {
                    "value": scalar,
                    "citations": {
                        **one_citation,
                        "items": {
                            "type": "object",
                            "required": ["excerpt"],
                            "properties": {"excerpt": NONEMPTY},
                        },
                    },
                }
            },
        ),
        when(
            "status",
            "unverified",
            {
                "properties": {
                    "value": scalar,
                    "citations": {
                        **one_citation,
                        "items": {"type": "object", "properties": {"excerpt": {"type": "null"}}},
                    },
                }
            },
        ),
        when("status", "unsupported", {"properties": {"value": scalar, "citations": none}}),
        when("status", "notFound", {"properties": {"value": {"type": "null"}, "citations": none}}),
    ]
    assert {branch["if"]["properties"]["status"]["const"] for branch in contract} == set(
        crw_extract.STATUSES
    )
    basis = open_object(
        {
            "basisVersion": {"type": "integer", "const": crw_extract.BASIS_VERSION},
            "field": NONEMPTY,
            "status": {"type": "string", "enum": list(crw_extract.STATUSES)},
            "value": {"type": ["string", "number", "boolean", "null"], "pattern": NO_NUL},
            "citations": array(citation),
            "confidence": {
                "type": ["string", "null"],
                "enum": [*crw_extract.CONFIDENCE_LEVELS, None],
            },
            "reasoning": OPTIONAL_TEXT,
        },
        ["basisVersion", "field", "status", "value", "citations"],
        allOf=contract,
    )
    return open_object({"basis": array(basis)}, ["basis"])


# -- crw-search: an answer and its sources' highlights


def _crw_search() -> dict[str, Any]:
    highlight = open_object(
        {
            "text": TEXT,
            "score": {"type": "number"},
            "charStart": INDEX,
            "charEnd": INDEX,
            "sourceHash": OPTIONAL_TEXT,
        },
        ["text", "score", "charStart", "charEnd"],
    )
    source = open_object(
        {
            "url": NONEMPTY,
            "title": TEXT,
            "position": INDEX,
            "highlights": array(named("CrwHighlight", highlight), nullable=True),
        },
        ["url", "title", "position"],
    )
    return open_object({"answer": TEXT, "sources": array(source)}, ["answer", "sources"])


# format ⇒ (component name stem, payload schema builder)
PAYLOADS = {
    anthropic.FORMAT: ("Anthropic", _anthropic),
    openai.FORMAT: ("Openai", _openai),
    gemini.FORMAT: ("Gemini", _gemini),
    crw_extract.FORMAT: ("CrwExtract", _crw_extract),
    crw_search.FORMAT: ("CrwSearch", _crw_search),
}
assert set(PAYLOADS) == set(CITATION_FORMATS)
