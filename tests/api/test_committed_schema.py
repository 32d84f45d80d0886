"""The OpenAPI description is committed (`spec.yaml` at the root, AGENTS.md's read
order), so an API change shows in review: the suite fails when the served schema
differs from it. `make spec` writes it anew."""

from __future__ import annotations

from pathlib import Path

import yaml
from django.test import Client

SPEC = Path(__file__).resolve().parents[2] / "spec.yaml"


def test_the_committed_spec_is_what_the_server_serves(db):
    served = Client().get("/api/schema/?format=yaml")
    assert served.status_code == 200
    committed = yaml.safe_load(SPEC.read_text())
    current = yaml.safe_load(served.content)
    if committed != current:
        changed = sorted(set(committed.get("paths", {})) ^ set(current.get("paths", {}))) or sorted(
            p
            for p in current.get("paths", {})
            if committed.get("paths", {}).get(p) != current["paths"][p]
        )
        raise AssertionError(
            "spec.yaml differs from the served schema (run `make spec` and review the "
            f"diff); paths that differ: {changed[:10]}"
        )
