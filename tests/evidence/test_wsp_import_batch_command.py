"""`manage.py import_wsp --batch-size N`: batches leave the summary of one-by-one imports."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evidence.models import Passage, RetrievalObservation
from policies.models import AuditEvent
from tests.evidence.conftest import broken, load

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, CommandError | None]:
    out, err = StringIO(), StringIO()
    try:
        call_command("import_wsp", *args, stdout=out, stderr=err)
    except CommandError as exc:
        return out.getvalue(), exc
    return out.getvalue(), None


def row(out: str, location: str) -> str:
    """The summary table's line for one file:line."""
    [line] = [line for line in out.splitlines() if f" {location} " in line]
    return line


@pytest.fixture
def lines(tmp_path):
    """A JSON Lines file of seven responses: three new, a replay, three rejected."""
    conflict = load("search")
    conflict["request_id"] = "req-other"
    documents = [
        json.dumps(load("search")),
        json.dumps(load("extract")),
        json.dumps(load("search")),  # replay of line 1
        json.dumps(conflict),  # execution_conflict with line 1
        "{not json",
        json.dumps(broken(load("aggregate"))),
        json.dumps(load("cache_hit")),
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(documents) + "\n", encoding="utf-8")
    return path


def test_import_wsp_in_batches_stores_and_audits_what_one_by_one_imports_would(curator, lines):
    out, error = run(str(lines), "--user", "curator", "--batch-size", "3")

    assert error is not None and error.returncode == 1
    # Lines appear in file order whatever the batch they were imported in.
    positions = [out.index(f" {lines}:{n} ") for n in range(1, 8)]
    assert positions == sorted(positions)
    assert sorted(RetrievalObservation.objects.values_list("execution_id", flat=True)) == [
        "exec-cache-002",
        "exec-extract-001",
        "exec-search-001",
    ]
    assert Passage.objects.count() == 5
    assert Passage.history.count() == 5
    assert AuditEvent.objects.filter(outcome="applied").count() == 3
    # The invalid JSON line never reaches the service; the other two refusals are audited.
    assert sorted(AuditEvent.objects.filter(outcome="refused").values_list("code", flat=True)) == [
        "execution_conflict",
        "wsp_contract_violation",
    ]


# The summary of these lines imported one by one (counts: received, created,
# duplicates, novelty; then the reasons).
SUMMARY = [
    ["exec-search-001", "imported", "3", "3", "0", "100", ""],
    ["exec-extract-001", "imported", "1", "1", "0", "100", ""],
    ["exec-search-001", "replayed", "3", "3", "0", "100", ""],
    ["exec-search-001", "rejected", "", "", "", "", "/ execution_conflict"],
    ["-", "rejected", "", "", "", "", "/ invalid_json"],
    [
        "exec-aggregate-001",
        "rejected",
        "",
        "",
        "",
        "",
        "/observations/0/provider_attempt_id fk_unresolved",
    ],
    # The cache hit repeats the search's first text: seen, whichever batch held it.
    ["exec-cache-002", "imported", "1", "0", "1", "0", ""],
]


@pytest.mark.parametrize("batch_size", ["1", "2", "7", "100"])
def test_the_summary_is_the_same_for_every_batch_size(curator, lines, batch_size):
    out, error = run(str(lines), "--user", "curator", "--batch-size", batch_size)

    assert error is not None and error.returncode == 1
    table = [
        [cell.strip() for cell in row(out, f"{lines}:{n}").split("│")[2:9]] for n in range(1, 8)
    ]
    assert table == SUMMARY
    assert out.splitlines()[-1] == "7 response(s): 3 imported, 1 replayed, 3 rejected"


def test_import_wsp_refuses_a_batch_size_below_one(curator, lines):
    _, error = run(str(lines), "--user", "curator", "--batch-size", "0")
    assert error is not None
    assert "--batch-size must be at least 1" in str(error)
    assert RetrievalObservation.objects.count() == 0
