"""`manage.py check --deploy` passes with the production environment; settings refuse
to load without a secret key when DEBUG is off. Each runs in a fresh interpreter."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

from django.conf import settings

PROJECT = Path(settings.BASE_DIR)

PRODUCTION_ENV = {
    "DJANGO_ENV": "production",
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(64),
    "DJANGO_ALLOWED_HOSTS": "grounding.example.org,localhost",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://grounding.example.org",
    "GROUNDING_LOG_SIGNING_KEY": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
}


def _run(args: list[str], extra_env: dict[str, str]) -> subprocess.CompletedProcess:
    # Only what the test sets: no DJANGO_* variable of the calling shell leaks in.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("DJANGO_") and k != "DATABASE_REPLICA_URL"
    }
    env["DJANGO_SETTINGS_MODULE"] = "grounding.project.settings"
    env.update(extra_env)
    return subprocess.run(
        [sys.executable, *args],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_passes_with_production_settings():
    result = _run(
        ["manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        PRODUCTION_ENV,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout, result.stdout + result.stderr


def test_check_deploy_flags_the_test_suite_defaults():
    # Without DJANGO_ENV=production there is no HTTPS redirect: the deploy check says so.
    env = {**PRODUCTION_ENV, "DJANGO_ENV": ""}
    result = _run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], env)
    assert result.returncode != 0
    assert "security.W008" in result.stdout + result.stderr


def test_production_settings_values():
    code = (
        "import json; from django.conf import settings as s; print(json.dumps({"
        "'redirect': s.SECURE_SSL_REDIRECT, 'proxy': s.SECURE_PROXY_SSL_HEADER, "
        "'hsts': s.SECURE_HSTS_SECONDS, 'session': s.SESSION_COOKIE_SECURE, "
        "'csrf': s.CSRF_COOKIE_SECURE, 'static': s.STORAGES['staticfiles']['BACKEND'], "
        "'middleware': s.MIDDLEWARE[:2], 'trusted': s.CSRF_TRUSTED_ORIGINS}))"
    )
    result = _run(["-c", code], PRODUCTION_ENV)
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values == {
        "redirect": True,
        "proxy": ["HTTP_X_FORWARDED_PROTO", "https"],
        "hsts": 31536000,
        "session": True,
        "csrf": True,
        "static": "whitenoise.storage.CompressedManifestStaticFilesStorage",
        "middleware": [
            "django.middleware.security.SecurityMiddleware",
            "whitenoise.middleware.WhiteNoiseMiddleware",
        ],
        "trusted": ["https://grounding.example.org"],
    }


def test_settings_refuse_to_load_without_a_secret_key_when_debug_is_off():
    code = "from django.conf import settings; settings.INSTALLED_APPS"
    result = _run(["-c", code], {"DJANGO_DEBUG": "0"})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "DJANGO_SECRET_KEY is required" in result.stderr


def test_settings_refuse_to_load_without_a_log_signing_key_when_debug_is_off():
    code = "from django.conf import settings; settings.INSTALLED_APPS"
    result = _run(["-c", code], {**PRODUCTION_ENV, "GROUNDING_LOG_SIGNING_KEY": ""})
    assert result.returncode != 0
    assert "GROUNDING_LOG_SIGNING_KEY is required when DJANGO_DEBUG is off" in result.stderr
    short = {**PRODUCTION_ENV, "GROUNDING_LOG_SIGNING_KEY": "c2hvcnQ="}
    result = _run(["-c", code], short)
    assert "must be a 32-byte Ed25519 seed in base64" in result.stderr


def test_production_refuses_debug():
    code = "from django.conf import settings; settings.INSTALLED_APPS"
    result = _run(["-c", code], {**PRODUCTION_ENV, "DJANGO_DEBUG": "1"})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
