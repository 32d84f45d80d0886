"""The from-citations request as the OpenAPI description states it: one variant per
`format` (a `oneOf` with its discriminator), each with the provider payload its parser
(grounding.citations) reads: the members it requires, their types and bounds.

A provider response carries many members no parser reads (ids, usage, model names):
they stay open, but every value in the body is storable text (no U+0000 in a string
or a member name, common.kernel.text), so an open member is a `JsonValue`, the JSON
value that rule admits. The options every derived link carries (language, media
type, generation evidence) have the shapes register gives them. What JSON Schema
cannot state of a payload (an offset inside its text, an end before its start, a crw
basis field given twice) is listed in tests/schemathesis_run/hooks.py as a rule
beyond the schema.

`from_citations_variants` is the postprocessing hook (SPECTACULAR_SETTINGS) that
replaces the serializer's one loose component by the variants.
"""

from __future__ import annotations

import copy
from typing import Any

from grounding.api.openapi_rules import GENERATION_EVIDENCE
from grounding.choices import CITATION_FORMATS
from grounding.citations import anthropic, crw_extract, crw_search, gemini, openai

NO_NUL = "^[^\\u0000]*$"
JSON_VALUE = "JsonValue"
# The named parts of the payloads (filled as they are built).
COMPONENTS: dict[str, dict[str, Any]] = {}
_JSON = {"$ref": f"#/components/schemas/{JSON_VALUE}"}
# Any JSON value whose strings and member names hold no U+0000.
JSON_VALUE_SCHEMA: dict[str, Any] = {
    "description": "Any JSON value; no string or member name holds U+0000.",
    # Untyped on purpose: each keyword applies to the values of its type only (a
    # client generator reads this as any value; a union of typed branches that
    # refer back to it is a recursion it cannot parse).
    "pattern": NO_NUL,
    "propertyNames": {"pattern": NO_NUL},
    "additionalProperties": _JSON,
    "items": _JSON,
}

TEXT = {"type": "string", "pattern": NO_NUL}
NONEMPTY = {"type": "string", "minLength": 1, "pattern": NO_NUL}
OPTIONAL_TEXT = {"type": ["string", "null"], "pattern": NO_NUL}  # require_str(optional)
INDEX = {"type": "integer", "minimum": 0}  # require_int
PAGE = {"type": "integer", "minimum": 1}


def _object(
    properties: dict[str, Any] | None = None, required: list[str] | None = None, **more: Any
) -> dict[str, Any]:
    """An open object: the members a parser reads as declared, any other a JsonValue."""
    schema: dict[str, Any] = {"type": "object", "propertyNames": {"pattern": NO_NUL}}
    if properties:
        schema["properties"] = properties
    if required:
        schema["required"] = sorted(required)
    schema["additionalProperties"] = _JSON
    return {**schema, **more}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _named(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` as the component `name` (an object in a nullable list, or in a union,
    is one a client generator must be able to name)."""
    COMPONENTS[name] = schema
    return _ref(name)


def _nullable(name: str) -> dict[str, Any]:
    """A named component or null (an inline object in a union is one a client
    generator cannot name)."""
    return {"oneOf": [_ref(name), {"type": "null"}]}


def _list(item: dict[str, Any], *, nullable: bool = False, **more: Any) -> dict[str, Any]:
    return {"type": ["array", "null"] if nullable else "array", "items": item, **more}


def _when(tag: str, value: str, then: dict[str, Any], **also: Any) -> dict[str, Any]:
    """`if <tag> is value then …` (the tag present: an absent one selects nothing)."""
    condition = {"properties": {tag: {"const": value}, **also}, "required": [tag]}
    return {"if": condition, "then": then}


def _typed_object(branches: list[dict[str, Any]], *, kind: dict[str, Any]) -> dict[str, Any]:
    """An object told apart by its `type` member: a type no branch names is read as
    the provider's own (skipped, not refused)."""
    return _object({"type": kind}, ["type"], allOf=branches)


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
        _when(
            "type",
            kind,
            {"properties": {"cited_text": OPTIONAL_TEXT, **members}, "required": required},
        )
        for kind, (members, required) in rows.items()
    ]
    return _typed_object(branches, kind=NONEMPTY)


def _anthropic() -> dict[str, Any]:
    text_block = {
        "properties": {
            "text": TEXT,
            "citations": _list(_named("AnthropicCitation", _anthropic_citation()), nullable=True),
        },
        "required": ["text"],
    }
    block = _typed_object([_when("type", "text", text_block)], kind=TEXT)
    return _object(
        {
            "type": {"type": "string", "const": "message"},
            "role": {"type": "string", "const": "assistant"},
            "content": _list(block),
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
    annotation = _typed_object(
        [
            _when("type", kind, {"properties": members, "required": required})
            for kind, (members, required) in rows.items()
        ],
        kind=NONEMPTY,
    )
    output_text = {
        "properties": {
            "text": TEXT,
            "annotations": _list(_named("OpenaiAnnotation", annotation), nullable=True),
        },
        "required": ["text"],
    }
    part = _typed_object([_when("type", "output_text", output_text)], kind=TEXT)
    # An assistant's message (a message without a role is one); others are not read.
    message = _when(
        "type",
        "message",
        {"properties": {"content": _list(part)}, "required": ["content"]},
        role={"const": "assistant"},
    )
    return _object(
        {
            "object": {"type": "string", "const": "response"},
            "output": _list(_typed_object([message], kind=TEXT)),
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
    segment = _object(
        _camel_and_snake(
            {
                "partIndex": optional_index,
                "startIndex": optional_index,
                "endIndex": optional_index,
                "text": OPTIONAL_TEXT,
            }
        )
    )
    support = _object(
        _camel_and_snake(
            {
                "segment": segment,
                "groundingChunkIndices": _list(INDEX, nullable=True),
                "confidenceScores": _list({"type": "number"}, nullable=True),
            }
        ),
        ["segment"],
    )
    metadata = _object(
        _camel_and_snake(
            {
                "groundingChunks": _list(_JSON, nullable=True),
                "groundingSupports": _list(_named("GeminiSupport", support), nullable=True),
            }
        ),
    )
    part = _object({"text": OPTIONAL_TEXT})
    content = _object({"parts": _list(_named("GeminiPart", part), nullable=True)})
    # Either may be null (read as empty).
    COMPONENTS.update(GeminiContent=content, GeminiGroundingMetadata=metadata)
    candidate = _object(
        _camel_and_snake(
            {
                "content": _nullable("GeminiContent"),
                "groundingMetadata": _nullable("GeminiGroundingMetadata"),
            }
        )
    )
    # Only the first candidate is read; the others are the provider's.
    candidates = {"type": "array", "minItems": 1, "prefixItems": [candidate], "items": _JSON}
    return _object({"candidates": candidates}, ["candidates"])


# -- crw-extract: basis items and their FieldStatus contract


def _crw_extract() -> dict[str, Any]:
    citation = _object(
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
        _when(
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
        _when(
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
        _when("status", "unsupported", {"properties": {"value": scalar, "citations": none}}),
        _when("status", "notFound", {"properties": {"value": {"type": "null"}, "citations": none}}),
    ]
    assert {branch["if"]["properties"]["status"]["const"] for branch in contract} == set(
        crw_extract.STATUSES
    )
    basis = _object(
        {
            "basisVersion": {"type": "integer", "const": crw_extract.BASIS_VERSION},
            "field": NONEMPTY,
            "status": {"type": "string", "enum": list(crw_extract.STATUSES)},
            "value": {"type": ["string", "number", "boolean", "null"], "pattern": NO_NUL},
            "citations": _list(citation),
            "confidence": {
                "type": ["string", "null"],
                "enum": [*crw_extract.CONFIDENCE_LEVELS, None],
            },
            "reasoning": OPTIONAL_TEXT,
        },
        ["basisVersion", "field", "status", "value", "citations"],
        allOf=contract,
    )
    return _object({"basis": _list(basis)}, ["basis"])


# -- crw-search: an answer and its sources' highlights


def _crw_search() -> dict[str, Any]:
    highlight = _object(
        {
            "text": TEXT,
            "score": {"type": "number"},
            "charStart": INDEX,
            "charEnd": INDEX,
            "sourceHash": OPTIONAL_TEXT,
        },
        ["text", "score", "charStart", "charEnd"],
    )
    source = _object(
        {
            "url": NONEMPTY,
            "title": TEXT,
            "position": INDEX,
            "highlights": _list(_named("CrwHighlight", highlight), nullable=True),
        },
        ["url", "title", "position"],
    )
    return _object({"answer": TEXT, "sources": _list(source)}, ["answer", "sources"])


# format ⇒ (component name stem, payload schema builder)
PAYLOADS = {
    anthropic.FORMAT: ("Anthropic", _anthropic),
    openai.FORMAT: ("Openai", _openai),
    gemini.FORMAT: ("Gemini", _gemini),
    crw_extract.FORMAT: ("CrwExtract", _crw_extract),
    crw_search.FORMAT: ("CrwSearch", _crw_search),
}
assert set(PAYLOADS) == set(CITATION_FORMATS)
REQUEST = "FromCitationsRequest"


def from_citations_variants(result: dict, generator, request, public) -> dict:
    """`FromCitationsRequest` (the serializer's, with a loose `payload`) as a `oneOf`
    of one closed component per format, `format` its discriminator; each variant's
    `payload` is that format's payload component."""
    schemas = result.get("components", {}).get("schemas", {})
    base = schemas.get(REQUEST)
    if base is None:
        return result
    schemas[JSON_VALUE] = copy.deepcopy(JSON_VALUE_SCHEMA)
    mapping = {}
    for value, (stem, build) in PAYLOADS.items():
        payload = {**build(), "description": f"The {value} response, as the provider returned it."}
        schemas[f"{stem}Payload"] = payload
        schemas.update(copy.deepcopy(COMPONENTS))
        variant = copy.deepcopy(base)
        variant.pop("description", None)
        variant["properties"]["format"] = {"type": "string", "const": value}
        variant["properties"]["payload"] = {"$ref": f"#/components/schemas/{stem}Payload"}
        # A document key is a member name: storable text too.
        variant["properties"]["passages"]["propertyNames"] = {"pattern": NO_NUL}
        # The options every derived link carries, judged up front (the service's
        # _option_offenders): the answer representation's shapes, generation evidence.
        for key in ("language", "media_type"):
            shape = copy.deepcopy(schemas["AnswerRepresentation"]["properties"][key])
            shape.pop("description", None)
            variant["properties"][key] = {**shape, "type": ["string", "null"]}
        variant["allOf"] = [copy.deepcopy(GENERATION_EVIDENCE)]
        name = f"FromCitations{stem}Request"
        schemas[name] = variant
        mapping[value] = f"#/components/schemas/{name}"
    schemas[REQUEST] = {
        "description": base.get("description", ""),
        "oneOf": [{"$ref": ref} for ref in mapping.values()],
        "discriminator": {"propertyName": "format", "mapping": mapping},
    }
    return result
