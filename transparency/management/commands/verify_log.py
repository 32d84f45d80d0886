"""`manage.py verify_log --dimension NAME [--checkpoint FILE [--consistency-proof FILE]]`:
verify a Dimension's transparency log from the database's bytes, with the verifier's
own hashing code (transparency.verifier), and name the first index, table and row
that disagree.

`--checkpoint` (alias `--since`) takes a signed checkpoint kept outside the database
(a file holding the note, as GET /api/v1/log/checkpoint served it). Of a size this
log reaches, the log must extend it. Of a longer log (the database restored to an
earlier point), the database is behind it: proved so by `--consistency-proof` (a file
holding GET /api/v1/log/proof/consistency's JSON from this log's size to the
checkpoint's), and a rewrite when that proof does not verify.

Exit codes, stable: 0 OK; 1 a disagreement (REWRITTEN when it is with the checkpoint
or the proof); 3 BEHIND, proved; 4 BEHIND, not proved (no proof given).
"""

from __future__ import annotations

import base64
import json
import sys
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from transparency import notes
from transparency.models import Log
from transparency.verifier import Report, verify

EXIT_OK, EXIT_DISAGREES, EXIT_BEHIND, EXIT_BEHIND_UNPROVED = 0, 1, 3, 4


class Command(BaseCommand):
    help = (
        "Verify a Dimension's transparency log: exit 0 OK, 1 a disagreement (REWRITTEN "
        "against --checkpoint), 3 BEHIND --checkpoint (proved), 4 BEHIND (not proved)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dimension", required=True)
        parser.add_argument(
            "--checkpoint",
            "--since",
            dest="checkpoint",
            help="a file holding a signed checkpoint kept outside the database",
        )
        parser.add_argument(
            "--consistency-proof",
            help="a file holding the consistency proof (GET /api/v1/log/proof/consistency's "
            "JSON) from this log's size to the checkpoint's, when the checkpoint is beyond it",
        )
        parser.add_argument(
            "--public-key",
            help="the note verifier key to check signatures with (default: the one of "
            "GROUNDING_LOG_SIGNING_KEY, as /api/v1/log/public-key serves it)",
        )
        parser.add_argument(
            "--skip-commitments", action="store_true", help="the tree and signatures only"
        )
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args, **options) -> None:
        name = options["dimension"]
        if not Log.objects.filter(dimension__name=name).exists():
            raise CommandError(f"no log of a Dimension named {name!r}")
        if options["consistency_proof"] and not options["checkpoint"]:
            raise CommandError("--consistency-proof goes with --checkpoint")
        checkpoint = _read(options["checkpoint"])
        proof = _proof(options["consistency_proof"])
        key = options["public_key"] or notes.signer().verifier_key
        started = time.monotonic()
        report = verify(
            name,
            verifier_key=key,
            since=checkpoint,
            proof=proof,
            commitments=not options["skip_commitments"],
        )
        seconds = time.monotonic() - started
        if options["json"]:
            self.stdout.write(json.dumps(_summary(report, seconds), indent=2))
        else:
            self._print(report, seconds)
        code = exit_code(report)
        if code != EXIT_OK:
            sys.exit(code)

    def _print(self, report: Report, seconds: float) -> None:
        self.stdout.write(
            f"{report.dimension}: {report.leaves} leaves of {report.size}, "
            f"{report.commitments} commitments ({report.withheld} withheld by disposal), "
            f"{report.checkpoints} checkpoints, {report.pending} pending, {seconds:.2f} s"
        )
        first = report.first()
        if first is not None:
            self.stdout.write(f"FIRST DISAGREEMENT: {first}")
            for problem in report.problems[1:20]:
                self.stdout.write(f"  also: {problem}")
        if report.rewritten:
            rewrite = next(p for p in report.problems if p.finding == "consistency")
            self.stdout.write(f"REWRITTEN: {rewrite.detail}")
        if report.behind:
            proved = "" if report.behind_proved else " (not proved)"
            self.stdout.write(f"BEHIND by {report.behind_by} leaves{proved}: {report.behind}")
        if report.ok:
            self.stdout.write("OK")


def exit_code(report: Report) -> int:
    if report.problems:
        return EXIT_DISAGREES
    if report.behind:
        return EXIT_BEHIND if report.behind_proved else EXIT_BEHIND_UNPROVED
    return EXIT_OK


def _summary(report: Report, seconds: float) -> dict:
    return {
        "dimension": report.dimension,
        "size": report.size,
        "leaves": report.leaves,
        "commitments": report.commitments,
        "withheld_by_disposal": report.withheld,
        "pending": report.pending,
        "checkpoints": report.checkpoints,
        "seconds": round(seconds, 3),
        "problems": [str(p) for p in report.problems],
        "rewritten": report.rewritten,
        "behind": report.behind,
        "behind_by": report.behind_by,
        "behind_proved": report.behind_proved,
        "ok": report.ok,
        "exit_code": exit_code(report),
    }


def _read(path: str | None) -> str | None:
    if not path:
        return None
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}") from exc


def _proof(path: str | None) -> dict | None:
    text = _read(path)
    if text is None:
        return None
    try:
        proof = json.loads(text)
    except ValueError as exc:
        raise CommandError(f"{path} is not JSON: {exc}") from exc
    try:
        for digest in proof["hashes"]:
            base64.b64decode(digest, validate=True)
    except (KeyError, TypeError, ValueError) as exc:
        raise CommandError(
            f"{path} is not a consistency proof ({{first, second, hashes: [base64…]}})"
        ) from exc
    return proof
