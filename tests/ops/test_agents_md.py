"""AGENTS.md (the WM-MEM-016 agents bootstrap) names only what exists: every
required field, every repository path it points at, every route it names."""

from __future__ import annotations

import json
import re
from pathlib import Path

from django.urls import Resolver404, resolve

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "tests/conformance/profile/wm-mem-016.json"


def _bootstrap() -> dict:
    return json.loads(PROFILE.read_text())["serviceLayers"]["agents_bootstrap"]


def test_agents_md_has_every_required_field_of_the_profile():
    text = (ROOT / "AGENTS.md").read_text()
    required = _bootstrap()["required_fields"]
    assert required == [
        "Name",
        "Type",
        "Specification URL",
        "Storage type URL",
        "Interface URL",
        "Processes URL",
    ]
    for name in required:
        assert f"- **{name}**: " in text, name
    assert "## Read order" in text


def test_every_path_agents_md_names_is_a_file_of_the_repository():
    text = (ROOT / "AGENTS.md").read_text()
    paths = {p for p in re.findall(r"`([\w./-]+\.(?:md|json|py|yaml))`", text)}
    dirs = {p for p in re.findall(r"`([\w/-]+/)`", text) if not p.startswith("/")}
    assert {"docs/api.md", "spec.yaml", "tests/conformance/profile/wm-mem-016.json"} <= paths
    missing = [p for p in sorted(paths | dirs) if not (ROOT / p).exists()]
    assert missing == []


def test_every_route_agents_md_names_is_served():
    text = (ROOT / "AGENTS.md").read_text()
    routes = set(re.findall(r"`(?:GET )?(/api/[^`?\s]*)", text))
    assert "/api/schema/" in routes
    unresolved = []
    for route in sorted(routes):
        concrete = route.replace("{id}", "0b3d2f2e-5c1a-4a57-9d1e-3f0b6a8c9d10").replace("{n}", "1")
        concrete = concrete.replace("…/revisions/", "")
        if "…" in concrete:
            continue
        try:
            resolve(concrete)
        except Resolver404:
            unresolved.append(route)
    assert unresolved == []
