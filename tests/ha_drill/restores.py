"""Point-in-time restores with pgBackRest into scratch clusters (not yet)."""

from __future__ import annotations


def run_all(top, drill, step) -> None:
    pass
