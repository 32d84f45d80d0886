"""`manage.py import_wsp` on an 80-column terminal: one block per response, no
line longer than the terminal, nothing folded mid-word."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.evidence.conftest import broken, load

pytestmark = pytest.mark.django_db

NAME = "batches/responses-of-the-night.jsonl"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Terminal(StringIO):
    def isatty(self) -> bool:
        return True


def test_the_summary_fits_an_80_column_terminal(curator, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("LINES", "25")
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "batches" / "responses-of-the-night.jsonl"
    path.parent.mkdir()
    path.write_text(
        "\n".join([json.dumps(load("search")), "{not json", json.dumps(broken(load("aggregate")))])
        + "\n",
        encoding="utf-8",
    )
    out = Terminal()
    with pytest.raises(CommandError):
        call_command(
            "import_wsp",
            "batches/responses-of-the-night.jsonl",
            "--user",
            "curator",
            stdout=out,
            stderr=StringIO(),
        )

    lines = ANSI.sub("", out.getvalue()).splitlines()
    assert max(len(line) for line in lines) <= 80, lines
    assert "│" not in "".join(lines)
    assert lines[:7] == [
        f"{NAME}:1  imported  exec-search-001",
        "    3 received, 3 created, 0 duplicates, novelty 100",
        f"{NAME}:2  rejected  -",
        "    / invalid_json",
        f"{NAME}:3  rejected  exec-aggregate-001",
        "    /observations/0/provider_attempt_id fk_unresolved",
        "3 response(s): 1 imported, 0 replayed, 2 rejected",
    ]
