"""The served description says exactly what the server does (issue 26, item 2).

Together with tests/api/conftest.py's strict validation of every response the API
tests receive (tests/api/strict_responses.py), these hold the description to: one
OpenAPI version read the same by every tool (3.1: a nullable reference is a oneOf
with null, which 3.0.3 could not say), every member typed, every enum member named,
short names, one schema per projection format, and every problem extension member
the server sends declared.
"""

from __future__ import annotations

import ast
import json
import keyword
import re
from pathlib import Path

import pytest
from django.test import Client

from tests.api.strict_responses import StrictSchema, UndeclaredResponse

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_KEYWORDS_WITH_SUBSCHEMAS = ("properties", "items", "allOf", "anyOf", "oneOf")


_SERVED: list[dict] = []


@pytest.fixture
def schema(db) -> dict:
    if not _SERVED:  # served once per module run: the description does not change
        response = Client().get("/api/schema/?format=json")
        assert response.status_code == 200
        assert response["Content-Type"].startswith("application/vnd.oai.openapi+json")
        _SERVED.append(response.json())
    return _SERVED[0]


def _walk(node, where=""):
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            if key not in ("example", "examples", "enum", "const", "default"):
                yield from _walk(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _walk(item, f"{where}/{i}")


def test_the_schema_is_openapi_31_without_30_keywords(schema):
    assert schema["openapi"] == "3.1.0"
    nullable = [where for where, node in _walk(schema) if "nullable" in node]
    assert nullable == []
    # A nullable reference is a oneOf of the reference and null, never allOf + nullable.
    link = schema["components"]["schemas"]["AssessmentResult"]["properties"]["link"]
    assert link["oneOf"] == [{"$ref": "#/components/schemas/Link"}, {"type": "null"}]
    anchor = schema["components"]["schemas"]["AnchorRead"]["properties"]["anchor_result"]
    assert {"type": "null"} in anchor["oneOf"]


def test_no_property_or_item_is_untyped(schema):
    typed = ("type", "$ref", "allOf", "anyOf", "oneOf", "enum", "const")
    untyped = []
    for name, component in schema["components"]["schemas"].items():
        for where, node in _walk(component, name):
            branch = re.search(r"/(allOf|anyOf|oneOf|then|else|if)/", where + "/")
            for prop, sub in (node.get("properties") or {}).items():
                if not branch and isinstance(sub, dict) and not any(k in sub for k in typed):
                    untyped.append(f"{where}/properties/{prop}")
            if isinstance(node.get("items"), dict) and not any(k in node["items"] for k in typed):
                untyped.append(f"{where}/items")
    assert untyped == []
    profile = schema["components"]["schemas"]["Profile"]["properties"]
    assert profile["support_vocabulary"]["items"] == {"type": "string"}
    decision = schema["components"]["schemas"]["Decision"]["properties"]
    assert decision["fields"]["items"] == {"$ref": "#/components/schemas/DisclosableFieldEnum"}


def test_every_enum_names_its_members(schema):
    unnamed = []
    for where, node in _walk(schema):
        values = node.get("enum")
        if not isinstance(values, list):
            continue
        names = node.get("x-enum-varnames")
        if names is None or len(names) != len(values) or len(set(names)) != len(names):
            unnamed.append(where)
            continue
        assert all(n.isidentifier() and not keyword.iskeyword(n) for n in names), where
    assert unnamed == []
    verdict = schema["components"]["schemas"]["VerdictEnum"]
    assert dict(zip(verdict["enum"], verdict["x-enum-varnames"], strict=True))["supporting"] == (
        "SUPPORTING"
    )
    ordering = next(
        p for p in schema["paths"]["/api/v1/groundings/"]["get"]["parameters"]
        if p["name"] == "ordering"
    )  # fmt: skip
    names = dict(
        zip(ordering["schema"]["enum"], ordering["schema"]["x-enum-varnames"], strict=True)
    )
    assert names["-grounding_id"] == "DESC_GROUNDING_ID"


def test_no_schema_has_a_sentence_for_a_title(schema):
    # A client generator names a class after a title: a sentence makes
    # WSPV3ResponseV3Amendment002AsTheGroundingRegistryReadsIt.
    titles = [
        (where, node["title"])
        for where, node in _walk(schema["components"])
        if isinstance(node.get("title"), str) and not where.endswith("/properties")
    ]
    assert [t for t in titles if len(t[1]) > 30 or " " in t[1]] == []
    assert all(len(name) <= 40 for name in schema["components"]["schemas"]), [
        name for name in schema["components"]["schemas"] if len(name) > 40
    ]


def test_the_projection_is_one_schema_per_format(schema):
    components = schema["components"]["schemas"]
    variants = [ref["$ref"].rsplit("/", 1)[1] for ref in components["ProjectionResult"]["oneOf"]]
    assert variants == [
        "NativeProjection", "WebAnnotationProjection", "ProvOProjection", "ProjectionTombstone"
    ]  # fmt: skip
    tags = {
        name: components[name]["properties"].get("format", {}).get("const") for name in variants
    }
    assert tags == {"NativeProjection": "native", "WebAnnotationProjection": "web-annotation",
                    "ProvOProjection": "prov-o", "ProjectionTombstone": None}  # fmt: skip
    assert {"fields", "format"} <= set(components["NativeProjection"]["required"])
    assert {"document", "media_type", "export_sha256", "export_canonicalization"} <= set(
        components["WebAnnotationProjection"]["required"]
    )
    assert {"turtle", "jsonld", "media_type", "export_sha256"} <= set(
        components["ProvOProjection"]["required"]
    )
    tombstone = components["ProjectionTombstone"]["properties"]["record_state"]
    assert tombstone["const"] == "disposed"


def test_an_assessment_result_declares_the_record_as_the_link_shows_it(schema):
    result = schema["components"]["schemas"]["AssessmentResult"]["properties"]
    shown = schema["components"]["schemas"]["AssessmentRead"]["properties"]
    assert set(shown) <= set(result)
    citation = schema["components"]["schemas"]["CitationEntry"]["properties"]
    positions = {"block_index", "output_index", "content_index", "support_index",
                 "chunk_position", "source_index", "highlight_index", "basis_index"}  # fmt: skip
    assert positions <= set(citation)
    assert citation["source_span"]["oneOf"][1] == {"type": "null"}


def _problem_extras_in_source() -> set[str]:
    """Every key a Refusal(..., extra={...}) of the code base adds to its problem, and
    the members common.web.errors sets on a problem body itself."""
    found: set[str] = set()
    for path in [*ROOT.glob("grounding/**/*.py"), *ROOT.glob("evidence/**/*.py"),
                 *ROOT.glob("policies/**/*.py")]:  # fmt: skip
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Refusal":
                for kw in node.keywords:
                    if kw.arg == "extra" and isinstance(kw.value, ast.Dict):
                        found |= {k.value for k in kw.value.keys if isinstance(k, ast.Constant)}
    errors = (ROOT / "common/web/errors.py").read_text(encoding="utf-8")
    found |= set(re.findall(r'body\["([a-z_]+)"\] =', errors))
    return found


def test_every_problem_extension_member_is_declared(schema):
    extras = _problem_extras_in_source()
    assert {"current_revision", "change_ref", "loss_report", "retry_after"} <= extras
    problem = schema["components"]["schemas"]["Problem"]["properties"]
    assert extras - set(problem) == set()


def test_strict_validation_refuses_what_the_schema_does_not_declare(schema):
    """The validator the API tests run every response through (conftest) is strict:
    an undeclared member, a null where none is allowed, a status or media type the
    operation does not declare all fail."""
    strict = StrictSchema(schema)
    path = "/api/v1/groundings/00000000-0000-7000-8000-000000000000/revisions/"
    body = {"grounding_id": "00000000-0000-7000-8000-000000000000", "revision": 1,
            "results": []}  # fmt: skip
    assert strict.check("GET", path, 200, "application/json", json.dumps(body).encode())
    for bad in ({**body, "surprise": 1}, {**body, "revision": None}, {"revision": 1}):
        with pytest.raises(UndeclaredResponse):
            strict.check("GET", path, 200, "application/json", json.dumps(bad).encode())
    with pytest.raises(UndeclaredResponse, match="status not declared"):
        strict.check("GET", path, 418, "application/json", b"{}")
    with pytest.raises(UndeclaredResponse, match="media type"):
        strict.check("GET", path, 200, "text/html", b"<p>")
    assert strict.check("GET", "/admin/", 200, "text/html", b"<p>") is False


SELECTORS = [
    ({"type": "TextQuoteSelector", "exact": "opened in 1932", "prefix": "The bridge "}, True),
    ({"type": "TextPositionSelector", "start": 10, "end": 58}, True),
    (
        {
            "type": "TextPositionSelector", "start": 0, "end": 3,
            "refinedBy": {"type": "TextQuoteSelector", "exact": "abc"},
        },
        True,
    ),
    ({"type": "FragmentSelector", "value": "page=2"}, True),
    ({"type": "WspSegmentSelector", "segment": 2, "field": "text"}, True),
    ({"type": "TextQuoteSelector"}, False),
    ({"type": "TextQuoteSelector", "exact": "x", "start": 1}, False),
    ({"type": "TextPositionSelector", "start": -1, "end": 2}, False),
    ({"type": "CssSelector", "value": "p"}, False),
    ({"exact": "x"}, False),
    (
        {
            "type": "TextPositionSelector", "start": 0, "end": 3,
            "refinedBy": {"type": "TextQuoteSelector"},
        },
        False,
    ),
]  # fmt: skip


@pytest.mark.parametrize(("value", "valid"), SELECTORS)
def test_a_selector_is_one_named_variant_per_type_accepting_what_the_shipped_schema_does(
    schema, value, valid
):
    """The shipped selector schema's `if type is X then …` branches are served as a
    oneOf of named variants with a discriminator (a generated client reads each
    variant's members); both accept and refuse the same values."""
    from jsonschema import Draft202012Validator

    components = schema["components"]["schemas"]
    assert components["Selector"]["discriminator"]["propertyName"] == "type"
    assert [ref["$ref"].rsplit("/", 1)[1] for ref in components["Selector"]["oneOf"]] == [
        "TextQuoteSelector", "TextPositionSelector", "FragmentSelector",
        "DataPositionSelector", "RangeSelector", "WspSegmentSelector",
    ]  # fmt: skip
    assert components["TextQuoteSelector"]["properties"]["type"]["const"] == "TextQuoteSelector"
    assert "SelectorTypeEnum" not in components
    shipped = json.loads((ROOT / "grounding" / "schemas" / "selector.json").read_text("utf-8"))
    served = {"$ref": "#/components/schemas/Selector", "components": schema["components"]}
    assert Draft202012Validator(shipped).is_valid(value) is valid
    assert Draft202012Validator(served).is_valid(value) is valid
