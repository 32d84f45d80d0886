"""The lock files pin, with hashes, every dependency pyproject.toml declares
(`make lock` regenerates them; `make install` and the Dockerfile install from them)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from django.conf import settings

PROJECT = Path(settings.BASE_DIR)
PROJECT_META = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement).group(0)).lower()


def _pins(lock: str) -> dict[str, list[str]]:
    """name → the hashes of its pin."""
    pins: dict[str, list[str]] = {}
    current = None
    for line in (PROJECT / lock).read_text(encoding="utf-8").splitlines():
        if match := re.match(r"^([A-Za-z0-9._-]+)==\S+", line):
            current = _name(match.group(1))
            pins[current] = []
        elif current and (match := re.search(r"--hash=sha256:([0-9a-f]{64})", line)):
            pins[current].append(match.group(1))
    return pins


@pytest.mark.parametrize(
    ("lock", "groups"),
    [("requirements.lock", ()), ("requirements-dev.lock", ("dev",))],
)
def test_every_declared_dependency_is_pinned_with_hashes(lock, groups):
    pins = _pins(lock)
    declared = list(PROJECT_META["dependencies"])
    for group in groups:
        declared += PROJECT_META["optional-dependencies"][group]
    assert {_name(r) for r in declared} - set(pins) == set()
    assert [name for name, hashes in pins.items() if not hashes] == []


def test_the_dockerfile_and_make_install_from_the_locks():
    dockerfile = (PROJECT / "Dockerfile").read_text(encoding="utf-8")
    makefile = (PROJECT / "Makefile").read_text(encoding="utf-8")
    assert "pip install --require-hashes -r requirements.lock" in dockerfile
    assert "pip install --no-deps ." in dockerfile
    assert "--require-hashes -r requirements-dev.lock" in makefile
