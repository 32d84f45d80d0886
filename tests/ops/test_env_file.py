"""`.env` local defaults (grounding.project.env.load_env_file): the environment wins, an
empty GROUNDING_ENV_FILE turns the file off, and the suite itself never reads one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings

from grounding.project.env import load_env_file

PROJECT = Path(settings.BASE_DIR)


def test_the_suite_reads_no_env_file():
    assert os.environ["GROUNDING_ENV_FILE"] == ""
    assert settings.ENV_FILE is None


def test_the_environment_wins_over_the_file(tmp_path, monkeypatch):
    path = tmp_path / "local.env"
    path.write_text("GROUNDING_T_A=from-file\nGROUNDING_T_B=from-file\n", encoding="utf-8")
    monkeypatch.setenv("GROUNDING_T_A", "from-environment")
    monkeypatch.delenv("GROUNDING_T_B", raising=False)
    monkeypatch.setenv("GROUNDING_ENV_FILE", str(path))
    try:
        assert load_env_file(tmp_path / "unused.env") == path
        assert os.environ["GROUNDING_T_A"] == "from-environment"
        assert os.environ["GROUNDING_T_B"] == "from-file"
    finally:
        os.environ.pop("GROUNDING_T_B", None)


def test_a_missing_file_or_an_empty_name_reads_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("GROUNDING_ENV_FILE")
    assert load_env_file(tmp_path / "absent.env") is None
    (tmp_path / ".env").write_text("GROUNDING_T_C=x\n", encoding="utf-8")
    monkeypatch.setenv("GROUNDING_ENV_FILE", "")
    assert load_env_file(tmp_path / ".env") is None
    assert "GROUNDING_T_C" not in os.environ


def test_the_example_file_makes_settings_load_without_a_secret_key(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DJANGO_SECRET_KEY", "DJANGO_DEBUG", "DJANGO_ENV")
    }
    env["GROUNDING_ENV_FILE"] = str(PROJECT / ".env.example")
    code = (
        "import django; from django.conf import settings; django.setup(); "
        "print(settings.DEBUG, settings.LOGGING['handlers']['stdout']['formatter'])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "text"]
    env["GROUNDING_ENV_FILE"] = ""
    refused = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT, env=env, capture_output=True, text=True
    )
    assert "DJANGO_SECRET_KEY is required" in refused.stderr
