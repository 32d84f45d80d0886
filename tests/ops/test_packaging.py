"""The wheel carries what the installed service serves: every template and static
file inside its package, the project-wide templates (top-level templates/), the
schemas and shapes, and the console entry point."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from django.conf import settings

PROJECT = Path(settings.BASE_DIR)
PACKAGES = ("grounding", "evidence", "policies", "feed", "common")


def test_project_templates_come_from_the_top_level_folder_then_the_apps():
    assert settings.TEMPLATES[0]["DIRS"] == [PROJECT / "templates"]
    assert settings.TEMPLATES[0]["APP_DIRS"] is True
    assert {p.relative_to(PROJECT).as_posix() for p in (PROJECT / "templates").rglob("*.html")} == {
        "templates/400.html",
        "templates/403.html",
        "templates/404.html",
        "templates/500.html",
        "templates/error.html",
        "templates/admin/base_site.html",
    }


def test_the_error_pages_and_the_admin_chrome_are_the_projects(client, db):
    from django.template.loader import get_template

    assert get_template("500.html").origin.name == str(PROJECT / "templates" / "500.html")
    # The 500 page renders with an empty context (Django's server_error does).
    page = get_template("500.html").render()
    assert "<h1>Server error</h1>" in page and "Grounding-link registry" in page
    missing = client.get("/groundings/not-a-link-at-all/")
    assert missing.status_code == 404
    assert b"<h1>Not found</h1>" in missing.content
    login = client.get("/admin/login/")
    assert (
        b'<div id="site-name"><a href="/admin/">Grounding-link registry</a></div>' in login.content
    )
    assert b"It does not judge truth." in login.content


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    # Built from a copy, so the build leaves nothing in the working tree.
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(PROJECT / name, source / name)
    for package in (*PACKAGES, "templates"):
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


def test_the_wheel_carries_the_project_templates_as_data(wheel):
    data = {
        name.split(".data/data/share/grounding-registry/", 1)[1]
        for name in wheel.namelist()
        if ".data/data/share/grounding-registry/" in name
    }
    expected = {p.relative_to(PROJECT).as_posix() for p in (PROJECT / "templates").rglob("*.html")}
    assert "templates/admin/base_site.html" in expected
    assert data == expected


def test_the_wheel_declares_the_console_entry_point(wheel):
    [entry_points] = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(entry_points).decode()
    assert "grounding-registry = grounding.project.cli:main" in text
