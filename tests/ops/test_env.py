"""Typed environment reads (grounding.project.env): the values each accepts, its
defaults, and the refusal of a malformed value when the settings load."""

from __future__ import annotations

import pytest

from grounding.project.env import env_bool, env_int, env_list, env_str
from tests.ops.test_check_deploy import _run

NAME = "GROUNDING_TEST_ENV_VALUE"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        *[("1", True), ("true", True), (" Yes ", True), ("ON", True)],
        *[("0", False), ("false", False), ("No", False), ("off", False), ("", False)],
    ],
)
def test_env_bool_reads_the_usual_spellings(monkeypatch, raw, expected):
    monkeypatch.setenv(NAME, raw)
    assert env_bool(NAME, default=not expected) is expected


@pytest.mark.parametrize("raw", ["2", "maybe", "ture", "y"])
def test_env_bool_refuses_anything_else(monkeypatch, raw):
    monkeypatch.setenv(NAME, raw)
    with pytest.raises(ValueError, match=f"{NAME} must be a boolean"):
        env_bool(NAME, default=False)


def test_unset_variables_take_their_defaults(monkeypatch):
    monkeypatch.delenv(NAME, raising=False)
    assert env_bool(NAME, default=True) is True
    assert env_int(NAME, default=7) == 7
    assert env_list(NAME, default=["a"]) == ["a"]
    assert env_str(NAME, default="d") == "d"


def test_env_int_reads_integers_and_takes_the_default_for_empty(monkeypatch):
    monkeypatch.setenv(NAME, "42")
    assert env_int(NAME, default=1) == 42
    monkeypatch.setenv(NAME, "")
    assert env_int(NAME, default=1) == 1
    monkeypatch.setenv(NAME, "8MiB")
    with pytest.raises(ValueError):
        env_int(NAME, default=1)


def test_env_list_splits_on_commas_and_drops_blanks(monkeypatch):
    monkeypatch.setenv(NAME, " a.example, ,b.example ,")
    assert env_list(NAME, default=[]) == ["a.example", "b.example"]
    monkeypatch.setenv(NAME, "")
    assert env_list(NAME, default=["x"]) == []


@pytest.mark.parametrize(
    ("variable", "value"),
    [("DJANGO_DEBUG", "maybe"), ("GROUNDING_MAX_BODY_BYTES", "8MiB")],
)
def test_settings_refuse_to_load_with_a_malformed_value(variable, value):
    code = "from django.conf import settings; settings.INSTALLED_APPS"
    result = _run(["-c", code], {"DJANGO_SECRET_KEY": "x" * 50, variable: value})
    assert result.returncode != 0
    assert "ValueError" in result.stderr
    assert value in result.stderr
