"""`manage.py reapply_disposals [--journal FILE …] [--apply-unconfirmed] [--actor USER]
[--dry-run] [--json]`: after a restore, apply again every journaled disposal the
database lacks (grounding.services.disposal_reapply), and report the counts.

Exit 0 when the database now holds every committed disposal of the journals (and
no intent is left unconfirmed), 1 when one failed, 2 when intents remain
unconfirmed (their commit is unknown: apply them with --apply-unconfirmed, or leave
them), 3 with --dry-run when some would be applied.
"""

from __future__ import annotations

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from grounding.services import disposal_journal
from grounding.services.disposal_reapply import reapply


class Command(BaseCommand):
    help = "Apply again the journaled disposals a restored database lacks."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--journal",
            action="append",
            help="a disposal journal (repeatable; default GROUNDING_DISPOSAL_JOURNAL)",
        )
        parser.add_argument(
            "--apply-unconfirmed",
            action="store_true",
            help="also apply the intents with no committed line the database lacks",
        )
        parser.add_argument(
            "--actor", help="dispose as this user (an access steward) instead of the original"
        )
        parser.add_argument("--dry-run", action="store_true", help="count, apply nothing")
        parser.add_argument("--json", action="store_true", help="print the counts as JSON")

    def handle(self, *args, **options) -> None:
        paths = options["journal"] or [p for p in [disposal_journal.journal_path()] if p]
        if not paths:
            raise CommandError("no journal: give --journal FILE or set GROUNDING_DISPOSAL_JOURNAL")
        result = reapply(
            paths,
            apply_unconfirmed=options["apply_unconfirmed"],
            actor_username=options["actor"],
            dry_run=options["dry_run"],
        )
        counts = result.as_dict()
        if options["json"]:
            self.stdout.write(json.dumps(counts, indent=2))
        else:
            verb = "would reapply" if options["dry_run"] else "reapplied"
            self.stdout.write(
                f"disposals: {counts['journaled']} journaled, {counts['already_applied']} "
                f"already applied, {counts['link_absent']} of links the database does not "
                f"hold, {verb} {counts['reapplied']}, {counts['failed']} failed, "
                f"{counts['unconfirmed']} unconfirmed, {counts['confirmed']} confirmed, "
                f"{counts['torn_lines']} torn lines"
            )
            for failure in result.failed:
                self.stdout.write(f"FAILED: {failure}")
            for grounding_id in result.unconfirmed:
                self.stdout.write(f"UNCONFIRMED: {grounding_id}")
        if result.failed:
            sys.exit(1)
        if result.unconfirmed:
            sys.exit(2)
        if options["dry_run"] and result.reapplied:
            sys.exit(3)
