"""`manage.py import_wsp`: files and JSON Lines, summary table, exit status, re-runs."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evidence.models import Passage, RetrievalObservation
from tests.evidence.conftest import load

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, CommandError | None]:
    out, err = StringIO(), StringIO()
    try:
        call_command("import_wsp", *args, stdout=out, stderr=err)
    except CommandError as exc:
        return out.getvalue(), exc
    return out.getvalue(), None


@pytest.fixture
def files(tmp_path):
    single = tmp_path / "search.json"
    single.write_text(json.dumps(load("search"), ensure_ascii=False), encoding="utf-8")
    lines = tmp_path / "batch.jsonl"
    lines.write_text(
        "\n".join(json.dumps(load(n), ensure_ascii=False) for n in ("extract", "cache_hit")) + "\n",
        encoding="utf-8",
    )
    return single, lines


def test_import_wsp_imports_json_and_jsonl_and_prints_a_summary(curator, files):
    single, lines = files
    out, error = run(str(single), str(lines), "--user", "curator")

    assert error is None
    assert RetrievalObservation.objects.count() == 3
    assert Passage.objects.count() == 5
    assert f"{single}:1" in out
    assert f"{lines}:1" in out and f"{lines}:2" in out
    assert "exec-search-001" in out and "exec-extract-001" in out and "exec-cache-002" in out
    assert "3 response(s): 3 imported, 0 replayed, 0 rejected" in out


def test_rerunning_import_wsp_replays_and_stores_nothing_new(curator, files):
    single, lines = files
    run(str(single), str(lines), "--user", "curator")

    out, error = run(str(single), str(lines), "--user", "curator")

    assert error is None
    assert "3 response(s): 0 imported, 3 replayed, 0 rejected" in out
    assert RetrievalObservation.objects.count() == 3
    assert Passage.objects.count() == 5


def test_import_wsp_reports_rejections_with_pointers_and_exits_1(curator, tmp_path):
    broken = load("search")
    broken["execution_id"] = "exec-broken-1"
    broken["observations"][2]["provider_attempt_id"] = "att-9"
    batch = tmp_path / "mixed.jsonl"
    batch.write_text(
        "\n".join([json.dumps(load("extract")), json.dumps(broken), "{not json"]) + "\n",
        encoding="utf-8",
    )

    out, error = run(str(batch), "--user", "curator")

    assert error is not None and error.returncode == 1
    assert "/observations/2/provider_attempt_id fk_unresolved" in out
    assert f"{batch}:3" in out and "invalid_json" in out
    assert "3 response(s): 1 imported, 0 replayed, 2 rejected" in out
    # The valid line committed on its own; the broken ones stored nothing.
    assert list(RetrievalObservation.objects.values_list("execution_id", flat=True)) == [
        "exec-extract-001"
    ]


def test_import_wsp_for_a_user_without_the_curator_role_rejects_every_response(reviewer, files):
    single, _ = files
    out, error = run(str(single), "--user", "reviewer")
    assert error is not None and error.returncode == 1
    assert "role_required" in out
    assert RetrievalObservation.objects.count() == 0


def test_import_wsp_requires_a_known_user(db, files):
    single, _ = files
    _, error = run(str(single), "--user", "nobody")
    assert error is not None
    assert "no user 'nobody'" in str(error)
