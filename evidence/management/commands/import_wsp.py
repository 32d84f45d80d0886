"""`manage.py import_wsp FILE… --user NAME`: import WSP v3 responses from files.

A `.json` file holds one ResponseV3, a `.jsonl` file one per line. Responses are
imported `--batch-size` at a time by `import_wsp_documents`, which decides each as
the API's one-document import would and writes a batch's accepted ones in one
transaction, so re-running a file replays what is already stored. Exit status 1
when anything was rejected.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from common.kernel.refusals import Offender, Refusal
from evidence.services.wsp_import import ImportResult, import_wsp_documents


@dataclass
class Outcome:
    location: str
    execution_id: str
    outcome: str  # imported | replayed | rejected
    report: dict = field(default_factory=dict)
    reasons: list[Offender] = field(default_factory=list)


class Command(BaseCommand):
    help = "Import WSP v3 responses (.json: one document, .jsonl: one per line)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument("--user", required=True, help="username of the acting curator")
        parser.add_argument(
            "--dimension",
            default=None,
            help="the Dimension to import into (may be left out when --user curates one)",
        )
        parser.add_argument(
            "--batch-size",
            type=int,
            default=100,
            help="responses written per transaction (default 100)",
        )

    def handle(
        self,
        *args,
        files: list[Path],
        user: str,
        batch_size: int,
        dimension: str | None = None,
        **options,
    ) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        actor = self._actor(user)
        documents = list(self._documents(files))
        stream = self.stdout._out
        # Not a terminal (a pipe, a log file): wide enough that rows never wrap, so each
        # file:line and pointer stays greppable.
        out = Console(file=stream, width=None if stream.isatty() else 1000)
        err = Console(file=self.stderr._out)
        outcomes: list[Outcome] = []
        with Progress(
            TextColumn("[bold]importing"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            console=err,
            transient=True,
        ) as progress:
            task = progress.add_task("", total=len(documents))
            for start in range(0, len(documents), batch_size):
                batch = documents[start : start + batch_size]
                progress.update(task, description=batch[0][0])
                outcomes.extend(self._import_batch(actor, batch, dimension))
                progress.advance(task, len(batch))
        # A terminal too narrow for the eight columns gets one block per response instead
        # of a table whose cells wrap into unreadable slivers.
        if out.width < WIDE_TABLE_COLUMNS:
            out.print(_blocks(outcomes), soft_wrap=False)
        else:
            out.print(self._summary(outcomes))
        rejected = sum(1 for o in outcomes if o.outcome == "rejected")
        out.print(
            f"{len(outcomes)} response(s): "
            f"{sum(o.outcome == 'imported' for o in outcomes)} imported, "
            f"{sum(o.outcome == 'replayed' for o in outcomes)} replayed, {rejected} rejected"
        )
        if rejected:
            raise CommandError(f"{rejected} response(s) rejected", returncode=1)

    def _actor(self, username: str):
        try:
            return get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist as exc:
            raise CommandError(f"no user {username!r}") from exc

    def _documents(self, files: list[Path]) -> Iterator[tuple[str, object]]:
        """(file:line, parsed document or the JSON error) for every response in the files."""
        for path in files:
            try:
                raw = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise CommandError(f"cannot read {path}: {exc}") from exc
            if path.suffix == ".jsonl":
                for number, line in enumerate(raw.splitlines(), start=1):
                    if line.strip():
                        yield f"{path}:{number}", _parse(line)
            else:
                yield f"{path}:1", _parse(raw)

    def _import_batch(
        self, actor, batch: list[tuple[str, object]], dimension: str | None
    ) -> list[Outcome]:
        parsed = [document for _, document in batch if not isinstance(document, _Unparsable)]
        results = iter(import_wsp_documents(actor=actor, documents=parsed, dimension=dimension))
        outcomes = []
        for location, document in batch:
            result = None if isinstance(document, _Unparsable) else next(results)
            outcomes.append(_outcome(location, document, result))
        return outcomes

    def _summary(self, outcomes: list[Outcome]) -> Table:
        table = Table(title="WSP import")
        for column in ("file:line", "execution_id", "outcome"):
            table.add_column(column, overflow="fold")
        for column in ("received", "created", "duplicates", "novelty"):
            table.add_column(column, justify="right")
        table.add_column("reasons (pointer code)", overflow="fold")
        for o in outcomes:
            counts = o.report.get("observations", {})
            cells = (
                o.location,
                o.execution_id,
                o.outcome,
                str(counts.get("received", "")),
                str(counts.get("created", "")),
                str(counts.get("duplicates", "")),
                str(o.report.get("novelty_score", "")),
                "\n".join(f"{r.pointer or '/'} {r.code}" for r in o.reasons),
            )
            # Text(), not markup: file names and ids are data, never rich markup.
            table.add_row(*(Text(cell) for cell in cells))
        return table


# Below this many columns the summary table's cells wrap; blocks are printed instead.
WIDE_TABLE_COLUMNS = 120


def _blocks(outcomes: list[Outcome]) -> Text:
    """The summary for a narrow terminal: per response, its place, outcome and
    execution id on one line, then its counts or its reasons, indented."""
    text = Text()
    for o in outcomes:
        text.append(o.location, style="bold")
        text.append(f"  {o.outcome}  {o.execution_id}\n")
        counts = o.report.get("observations", {})
        if counts:
            text.append(
                f"    {counts.get('received', 0)} received, {counts.get('created', 0)} created, "
                f"{counts.get('duplicates', 0)} duplicates, "
                f"novelty {o.report.get('novelty_score', '-')}\n"
            )
        for reason in o.reasons:
            text.append(f"    {reason.pointer or '/'} {reason.code}\n")
    text.rstrip()
    return text


@dataclass(frozen=True)
class _Unparsable:
    error: str


def _outcome(location: str, document: object, result: ImportResult | Refusal | None) -> Outcome:
    """The summary row of one response; `result` is None for unparsable input."""
    if isinstance(document, _Unparsable):
        return Outcome(
            location, "-", "rejected", reasons=[Offender("", "invalid_json", document.error)]
        )
    execution_id = document.get("execution_id") if isinstance(document, dict) else None
    execution_id = execution_id if isinstance(execution_id, str) else "-"
    if isinstance(result, Refusal):
        reasons = result.offenders or [Offender("", result.code, result.detail)]
        return Outcome(location, execution_id, "rejected", reasons=reasons)
    outcome = "imported" if result.created else "replayed"
    return Outcome(location, execution_id, outcome, report=result.report)


def _parse(text: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        # Only the position: the text itself may be source content.
        return _Unparsable(f"invalid JSON at line {exc.lineno} column {exc.colno}")
