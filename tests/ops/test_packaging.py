"""The wheel carries what the installed service serves: every template and static
file inside its package, the schemas and shapes, and the console entry point."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from django.conf import settings

PROJECT = Path(settings.BASE_DIR)
PACKAGES = ("grounding", "evidence", "policies", "feed")


def test_templates_are_found_in_the_apps_only():
    assert settings.TEMPLATES[0]["DIRS"] == []
    assert settings.TEMPLATES[0]["APP_DIRS"] is True
    assert not (PROJECT / "templates").exists()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    # Built from a copy, so the build leaves nothing in the working tree.
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(PROJECT / name, source / name)
    for package in PACKAGES:
        shutil.copytree(
            PROJECT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        pytest.fail(f"pip wheel failed:\n{done.stderr[-3000:]}")
    [built] = out.glob("*.whl")
    return zipfile.ZipFile(built)


def _shipped(package: str, folder: str) -> set[str]:
    root = PROJECT / package
    return {
        path.relative_to(PROJECT).as_posix()
        for path in root.rglob("*")
        if path.is_file()
        and folder in path.relative_to(root).parts
        and "__pycache__" not in path.parts
    }


def test_the_wheel_has_every_template_and_static_file(wheel):
    names = set(wheel.namelist())
    expected = set()
    for package in PACKAGES:
        expected |= _shipped(package, "templates") | _shipped(package, "static")
    assert "grounding/templates/admin/grounding/groundinglink/change_form.html" in expected
    assert "grounding/templates/grounding/link_detail.html" in expected
    assert "evidence/templates/admin/evidence/wsp_import.html" in expected
    assert expected - names == set()


def test_the_wheel_declares_the_console_entry_point(wheel):
    [entry_points] = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(entry_points).decode()
    assert "grounding-registry = grounding.project.cli:main" in text
