"""What the verifier found: problems at an index, table and row, and the counts."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Problem:
    finding: str
    detail: str
    index: int | None = None
    table: str = ""
    row: str = ""

    def __str__(self) -> str:
        where = [f"index {self.index}"] if self.index is not None else []
        if self.table:
            where.append(f"table {self.table}")
        if self.row:
            where.append(f"row {self.row}")
        return f"{', '.join(where) or 'log'}: {self.finding}: {self.detail}"


@dataclass
class Report:
    dimension: str
    size: int = 0
    leaves: int = 0
    commitments: int = 0
    withheld: int = 0  # commitments whose key disposal destroyed
    pending: int = 0
    checkpoints: int = 0
    problems: list[Problem] = field(default_factory=list)
    behind: str = ""  # a checkpoint beyond this log (an older state: a restore)
    behind_by: int = 0  # the checkpoint's size less this log's
    behind_proved: bool = False  # a consistency proof shows this log is its prefix
    destroyed: dict[str, str | None] = field(default_factory=dict)  # subject: by

    @property
    def ok(self) -> bool:
        return not self.problems and not self.behind

    @property
    def rewritten(self) -> bool:
        """The log disagrees with a checkpoint kept outside it (or with the
        consistency proof that would make it that checkpoint's prefix)."""
        return any(p.finding == "consistency" for p in self.problems)

    def first(self) -> Problem | None:
        return min(
            self.problems,
            key=lambda p: (p.index is None, p.index if p.index is not None else 0),
            default=None,
        )
