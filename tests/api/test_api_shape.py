"""One API shape: every API view of the three apps derives from the one base view
(authenticated unless public, JSON, varies by credentials), and every body is typed."""

from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from common.web.views import ApiView
from tests.api.helpers import client_for


def _api_views(patterns=None, prefix=""):
    for entry in patterns if patterns is not None else get_resolver().url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from _api_views(entry.url_patterns, route)
        elif isinstance(entry, URLPattern) and route.startswith("api/v1/"):
            yield route, entry.callback.cls


def test_every_api_view_derives_from_the_one_base_view():
    views = dict(_api_views())
    assert len(views) >= 20
    assert {
        route: cls.__name__ for route, cls in views.items() if not issubclass(cls, ApiView)
    } == {}


def test_every_app_answers_varying_by_credentials(world):
    client = client_for(world.curator)
    for path in ("/api/v1/groundings/", "/api/v1/evidence/passages/", "/api/v1/dimensions/"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert response["Vary"] == "Authorization, Cookie", path


def test_the_wsp_import_body_is_the_shipped_schema_as_one_component(db):
    schema = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    body = schema["paths"]["/api/v1/evidence/wsp-imports/"]["post"]["requestBody"]
    assert body["required"] is True
    assert body["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/WspResponseV3Request"
    }
    component = schema["components"]["schemas"]["WspResponseV3Request"]
    assert component["additionalProperties"] is False
    assert "execution_id" in component["required"]
    assert "evidence/wsp/schema/response_v3.json" in component["description"]
