"""`X-Served-By` names the app server that answered, when GROUNDING_SERVER_NAME is set;
settings install the middleware only then, and refuse a name that is not a plain token."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpResponse

from grounding.project.served_by import ServedByMiddleware

pytestmark = pytest.mark.urls("tests.ops.urls")

MIDDLEWARE = "grounding.project.served_by.ServedByMiddleware"


@pytest.fixture
def named(settings):
    settings.GROUNDING_SERVER_NAME = "web-a"
    settings.MIDDLEWARE = [MIDDLEWARE, *settings.MIDDLEWARE]
    settings.SECURE_SSL_REDIRECT = True  # the redirect, too, says who sent it


def test_every_response_names_the_server(client, db, named):
    assert client.get("/healthz")["X-Served-By"] == "web-a"
    missing = client.get("/no-such-page/", secure=True)
    assert missing.status_code == 404
    assert missing["X-Served-By"] == "web-a"
    redirect = client.get("/audited/")
    assert redirect.status_code == 301
    assert redirect["X-Served-By"] == "web-a"


def test_without_a_name_there_is_no_header(client, db):
    assert django_settings.GROUNDING_SERVER_NAME == ""
    assert MIDDLEWARE not in django_settings.MIDDLEWARE
    assert "X-Served-By" not in client.get("/healthz")


@pytest.mark.parametrize("name", ["", "web a", "web-a\r\nSet-Cookie: x=1", "é", "x" * 65])
def test_a_name_that_is_not_a_plain_token_is_refused(settings, name):
    settings.GROUNDING_SERVER_NAME = name
    with pytest.raises(ImproperlyConfigured, match="GROUNDING_SERVER_NAME"):
        ServedByMiddleware(lambda request: HttpResponse())


def _settings_in_a_fresh_interpreter(**env: str) -> subprocess.CompletedProcess:
    code = (
        "import json; from django.conf import settings as s; "
        "print(json.dumps([s.GROUNDING_SERVER_NAME, s.MIDDLEWARE[:2]]))"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    clean.pop("GROUNDING_SERVER_NAME", None)
    clean.update(
        DJANGO_SETTINGS_MODULE="grounding.project.settings", DJANGO_SECRET_KEY="test", **env
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(django_settings.BASE_DIR),
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_settings_put_it_outermost_when_a_name_is_set():
    result = _settings_in_a_fresh_interpreter(GROUNDING_SERVER_NAME="web-b")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [
        "web-b",
        [MIDDLEWARE, "django.middleware.security.SecurityMiddleware"],
    ]
