"""/api/schema/ is valid OpenAPI 3 and declares the conditional-request contract;
/api/docs/ is served from local static assets only."""

import re

import pytest
import yaml
from django.test import Client
from openapi_spec_validator import validate

MUTATING_LINK_OPERATIONS = [
    ("/api/v1/groundings/{grounding_id}/", "patch"),
    ("/api/v1/groundings/{grounding_id}/assessments/", "post"),
    ("/api/v1/groundings/{grounding_id}/anchor-observations/", "post"),
    ("/api/v1/groundings/{grounding_id}/withdrawal/", "post"),
    ("/api/v1/groundings/{grounding_id}/disposal/", "post"),
    ("/api/v1/evidence-sets/{ref}/members/", "post"),
    ("/api/v1/evidence-sets/{ref}/members/{grounding_id}/", "delete"),
]
PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def schema(django_db_blocker) -> dict:
    with django_db_blocker.unblock():
        response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()


def test_the_schema_is_valid_openapi_3(schema):
    assert schema["openapi"].startswith("3.")
    validate(schema)


def test_the_schema_is_also_served_as_yaml(db):
    response = Client().get("/api/schema/")
    assert response.status_code == 200
    document = yaml.safe_load(response.content)
    assert "/api/v1/groundings/" in document["paths"]


def test_format_json_serves_json_and_format_yaml_yaml(db, schema):
    as_json = Client().get("/api/schema/?format=json")
    assert as_json.status_code == 200
    assert as_json["Content-Type"].startswith("application/vnd.oai.openapi+json")
    assert as_json.json()["paths"].keys() == schema["paths"].keys()
    as_yaml = Client().get("/api/schema/?format=yaml")
    assert as_yaml["Content-Type"].startswith("application/vnd.oai.openapi")
    assert yaml.safe_load(as_yaml.content)["openapi"] == schema["openapi"]
    unknown = Client().get("/api/schema/?format=xml")
    assert unknown.status_code == 404
    assert unknown["Content-Type"].startswith(PROBLEM)


def test_every_documented_path_of_the_contract_is_present(schema):
    expected = {
        "/api/v1/groundings/": {"get", "post"},
        "/api/v1/groundings/bulk/": {"post"},
        "/api/v1/groundings/{grounding_id}/": {"get", "patch"},
        "/api/v1/groundings/{grounding_id}/assessments/": {"post"},
        "/api/v1/groundings/{grounding_id}/anchor-observations/": {"post"},
        "/api/v1/groundings/{grounding_id}/withdrawal/": {"post"},
        "/api/v1/groundings/{grounding_id}/disposal/": {"post"},
        "/api/v1/groundings/{grounding_id}/revisions/": {"get"},
        "/api/v1/groundings/{grounding_id}/revisions/{revision}/": {"get"},
        "/api/v1/groundings/{grounding_id}/projection/": {"get"},
        "/api/v1/evidence-sets/": {"post"},
        "/api/v1/evidence-sets/{ref}/": {"get"},
        "/api/v1/disclosure-decisions/": {"get", "post"},
        "/api/v1/disclosure-decisions/{key}/": {"get", "delete"},
        "/api/v1/dimensions/": {"get", "post"},
        "/api/v1/profiles/": {"get", "post"},
        "/api/v1/profiles/{ref}/publish/": {"post"},
    }
    for path, methods in expected.items():
        assert methods <= set(schema["paths"][path]), path


@pytest.mark.parametrize(("path", "method"), MUTATING_LINK_OPERATIONS)
def test_every_mutation_of_an_existing_aggregate_declares_if_match_412_and_428(
    schema, path, method
):
    operation = schema["paths"][path][method]
    headers = {p["name"] for p in operation["parameters"] if p["in"] == "header"}
    assert "If-Match" in headers
    for status in ("400", "409", "412", "428"):
        assert PROBLEM in operation["responses"][status]["content"], status
    success = next(code for code in ("200", "201") if code in operation["responses"])
    assert "ETag" in operation["responses"][success]["headers"]


def test_every_grounding_and_policy_operation_declares_its_problem_responses(schema):
    for path, item in schema["paths"].items():
        if "/evidence/" in path:  # the evidence API declares its own
            continue
        for method, operation in item.items():
            if method not in ("get", "post", "patch", "delete"):
                continue
            if {} in operation.get("security", []):
                # Public (the API root, the log's public key): 401 and 429 only.
                assert {"401", "429"} <= set(operation["responses"]), (path, method)
                continue
            for status in ("401", "429"):
                assert PROBLEM in operation["responses"][status]["content"], (path, method)
            if method != "get":  # a session write without its CSRF token, at least
                assert PROBLEM in operation["responses"]["403"]["content"], (path, method)
            if "requestBody" in operation:
                for status in ("400", "413", "415"):
                    assert status in operation["responses"], (path, method, status)


def test_the_problem_component_names_code_and_offenders(schema):
    problem = schema["components"]["schemas"]["Problem"]
    assert set(problem["required"]) == {"type", "title", "status", "detail", "code", "offenders"}
    assert "current_revision" in problem["properties"]


def test_the_docs_page_loads_only_local_assets(db):
    response = Client().get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger-ui" in html
    references = re.findall(r'(?:src|href)\s*=\s*["\']([^"\']+)["\']', html)
    assets = [r for r in references if r.endswith((".js", ".css", ".png", ".ico"))]
    assert assets, "the page references its assets"
    for reference in references:
        assert not re.match(r"^(https?:)?//", reference), reference
    assert "cdn.jsdelivr" not in html and "unpkg.com" not in html


def _resolve(schema: dict, node: dict) -> dict:
    """A reference (also a nullable one: oneOf it and null) resolved to its schema."""
    while True:
        if "oneOf" in node and {"type": "null"} in node["oneOf"] and len(node["oneOf"]) == 2:
            node = next(n for n in node["oneOf"] if n != {"type": "null"})
        elif "allOf" in node and len(node["allOf"]) == 1 and "$ref" in node["allOf"][0]:
            node = node["allOf"][0]
        elif "$ref" in node:
            node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
        else:
            return node


def _operations(schema: dict):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method in ("get", "post", "patch", "delete"):
                yield path, method, operation


@pytest.mark.parametrize(
    ("path", "filters"),
    [
        ("/api/v1/groundings/", {"dimension", "record_state", "recheck_state", "statement_ref",
                                 "answer_revision_ref", "passage_id", "support_kind",
                                 "change_ref"}),
        ("/api/v1/evidence/passages/", {"execution_id", "canonical_url", "content_sha256"}),
        ("/api/v1/audit-events/", {"grounding_id", "link", "actor", "action", "outcome", "code",
                                   "dimension"}),
        ("/api/v1/change-notifications/", {"dimension", "kind", "subject_ref", "change_ref",
                                           "observed_after", "observed_before"}),
    ],
)  # fmt: skip
def test_every_list_documents_its_cursor_page_size_and_filters(schema, path, filters):
    parameters = {p["name"]: p for p in schema["paths"][path]["get"]["parameters"]}
    assert {"cursor", "page_size", *filters} <= set(parameters)
    assert parameters["page_size"]["schema"] == {
        "type": "integer", "minimum": 1, "maximum": 10**18 - 1
    }  # fmt: skip


@pytest.mark.parametrize(("path", "method"), MUTATING_LINK_OPERATIONS)
def test_if_match_is_required_where_the_body_cannot_name_the_revision(schema, path, method):
    """Without If-Match the server answers 428, unless the body names expected_revision:
    so If-Match is required only on a DELETE (no body), and its shape is what
    grounding.api.conditional parses (else 400 invalid_if_match)."""
    operation = schema["paths"][path][method]
    if_match = next(p for p in operation["parameters"] if p["name"] == "If-Match")
    assert if_match["schema"] == {"type": "string", "pattern": r'^(\*|(W/)?"[1-9][0-9]{0,8}")$'}
    if method == "delete":
        assert if_match["required"] is True
        return
    assert if_match["required"] is False
    body = _resolve(schema, operation["requestBody"]["content"]["application/json"]["schema"])
    # Every shape of a body that is one of several names it (an anchor observation).
    for shape in body.get("oneOf", [body]):
        expected = _resolve(schema, shape)["properties"]["expected_revision"]
        assert (expected["type"], expected["minimum"], expected["maximum"]) == (
            "integer", 1, 999999999,
        )  # fmt: skip


def test_every_request_body_is_a_closed_typed_object(schema):
    for path, method, operation in _operations(schema):
        if "requestBody" not in operation:
            continue
        content = operation["requestBody"]["content"]
        # JSON, or a form (a PDF upload: multipart/form-data).
        media = content.get("application/json") or content["multipart/form-data"]
        body = _resolve(schema, media["schema"])
        # A body of several shapes (an anchor observation) is closed in each.
        for shape in (_resolve(schema, s) for s in body.get("oneOf", [body])):
            assert shape["type"] == "object" and shape["properties"], (path, method)
            assert shape["additionalProperties"] is False, (path, method)


def test_the_link_groups_are_typed_in_requests_responses_and_patches(schema):
    components = schema["components"]["schemas"]
    for name in ("Link", "RegisterRequest", "PatchedReviseRequest"):
        for group in ("statement", "passage", "anchor", "support", "time"):
            typed = _resolve(schema, components[name]["properties"][group])
            # A passage to register is one of two shapes (by id, or external).
            shapes = [_resolve(schema, s) for s in typed.get("oneOf", [typed])]
            assert all(s["type"] == "object" and s["properties"] for s in shapes), (name, group)
    passage = _resolve(schema, components["RegisterRequest"]["properties"]["passage"])
    by_id, external = (_resolve(schema, s) for s in passage["oneOf"])
    assert (by_id["required"], by_id["additionalProperties"]) == (["passage_id"], False)
    assert external["required"] == ["passage_ref", "source_revision_binding"]
    assert "passage_id" not in external["properties"]
    statement = _resolve(schema, components["StatementRequest"]["properties"]["claim_scope"])
    assert statement["required"] == ["proposition"]
    assert "If-Match" not in components  # a header, not a body member


def test_every_error_response_is_a_problem_document(schema):
    for path, _method, operation in _operations(schema):
        for status, response in operation["responses"].items():
            if status.startswith(("4", "5")):
                content = response["content"][PROBLEM]
                assert content["schema"] == {"$ref": "#/components/schemas/Problem"}, (path, status)
                assert content["examples"], (path, status)


def test_validation_constraints_the_server_enforces_are_in_the_schema(schema):
    components = schema["components"]["schemas"]
    assert components["DecisionInputRequest"]["properties"]["fields"]["minItems"] == 1
    assert components["AssessmentRequest"]["properties"]["assessment_ref"]["minLength"] == 1
    projection = schema["paths"]["/api/v1/groundings/{grounding_id}/projection/"]["get"]
    recipient = next(p for p in projection["parameters"] if p["name"] == "recipient")
    assert recipient["schema"]["minLength"] == 1


def test_examples_come_from_the_demo_data(schema):
    register = schema["paths"]["/api/v1/groundings/"]["post"]["requestBody"]["content"]
    (example,) = register["application/json"]["examples"].values()
    assert example["value"]["dimension"] == "demo"
    assert example["value"]["profile"] == "wm-mem-016@1.0.0"


def test_the_revision_placeholder_is_a_code_span_so_swagger_shows_it(schema):
    # Swagger UI renders descriptions as Markdown: a bare <revision> is an HTML tag.
    description = schema["info"]["description"]
    assert '`If-Match: "<revision>"`' in description
    assert not re.findall(r"<[a-z_]+>", re.sub(r"`[^`]*`", "", description))
