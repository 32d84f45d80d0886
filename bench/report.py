"""The benchmark's table: each path beside its limit measured in the same run, the
ratio and its target; then the figures held to an absolute target."""

from __future__ import annotations

from bench import absolute, ratios

COLUMNS = ("path", "registry", "limit in the same run", "ratio", "target", "met?")


def rows(results: dict) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    computed = results.get("ratios") or ratios.compute(results)
    return ratios.ratio_rows(results, computed), absolute.absolute_rows(results)


def print_table(results: dict) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    cores = results.get("machine_cores")
    table = Table(
        title=f"grounding registry benchmark (PostgreSQL, {cores} cores; absolute figures "
        "are noisy on a shared machine, ratios less so)"
    )
    for name in COLUMNS:
        table.add_column(name, justify="left" if name in ("path", "limit in the same run")
                         else "right")  # fmt: skip
    relative, absolute = rows(results)
    # Cells as text, not markup: a key like "[copy_over_bulk]" would read as a style.
    for row in relative:
        table.add_row(*(escape(str(cell)) for cell in row))
    table.add_section()
    for row in absolute:
        table.add_row(*(escape(str(cell)) for cell in row))
    Console(width=200).print(table)
