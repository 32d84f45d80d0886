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
            if path == "/api/v1/":
                continue
            for status in ("401", "403", "429"):
                assert PROBLEM in operation["responses"][status]["content"], (path, method)
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
