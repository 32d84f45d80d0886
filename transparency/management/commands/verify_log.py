"""`manage.py verify_log --dimension NAME [--since CHECKPOINT_FILE]`: verify a
Dimension's transparency log from the database's bytes, with the verifier's own
hashing code (transparency.verifier), and name the first index, table and row that
disagree (exit 1). `--since` takes an earlier signed checkpoint (a file holding the
note, as GET /api/v1/log/checkpoint served it): the log must extend it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from transparency import notes
from transparency.models import Log
from transparency.verifier import verify


class Command(BaseCommand):
    help = "Verify a Dimension's transparency log (exit 1 naming the first disagreement)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dimension", required=True)
        parser.add_argument("--since", help="a file holding an earlier signed checkpoint")
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
        since = Path(options["since"]).read_text(encoding="utf-8") if options["since"] else None
        key = options["public_key"] or notes.signer().verifier_key
        started = time.monotonic()
        report = verify(
            name, verifier_key=key, since=since, commitments=not options["skip_commitments"]
        )
        seconds = time.monotonic() - started
        summary = {
            "dimension": name,
            "size": report.size,
            "leaves": report.leaves,
            "commitments": report.commitments,
            "withheld_by_disposal": report.withheld,
            "pending": report.pending,
            "checkpoints": report.checkpoints,
            "seconds": round(seconds, 3),
            "problems": [str(p) for p in report.problems],
            "behind": report.behind,
            "ok": report.ok,
        }
        if options["json"]:
            self.stdout.write(json.dumps(summary, indent=2))
        else:
            self.stdout.write(
                f"{name}: {report.leaves} leaves of {report.size}, {report.commitments} "
                f"commitments ({report.withheld} withheld by disposal), {report.checkpoints} "
                f"checkpoints, {report.pending} pending, {seconds:.2f} s"
            )
            first = report.first()
            if first is not None:
                self.stdout.write(f"FIRST DISAGREEMENT: {first}")
                for problem in report.problems[1:20]:
                    self.stdout.write(f"  also: {problem}")
            if report.behind:
                self.stdout.write(f"BEHIND: {report.behind}")
            if report.ok:
                self.stdout.write("OK")
        if not report.ok:
            sys.exit(1)
