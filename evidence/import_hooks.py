"""What other apps do inside a WSP import's transaction, without evidence knowing them.

The evidence app sits below the grounding app (grounding imports evidence, never the
reverse), yet an import must tell the links bound to a source that its text changed
(docs/api.md "WSP import": `changes`). The grounding app registers a hook here when it
is ready; the import calls every hook inside its own transaction, before its rows are
written, and adds what they return to the reports.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# (actor, dimension, [(document index, passage)]) -> {document index: [report entries]}
ImportHook = Callable[[Any, Any, list[tuple[int, Any]]], dict[int, list[dict[str, Any]]]]

_HOOKS: list[ImportHook] = []


def register(hook: ImportHook) -> None:
    if hook not in _HOOKS:
        _HOOKS.append(hook)


def run(actor, dimension, passages: list[tuple[int, Any]]) -> dict[int, list[dict[str, Any]]]:
    """Every hook's report entries, by document index."""
    found: dict[int, list[dict[str, Any]]] = {}
    for hook in _HOOKS:
        for index, entries in hook(actor, dimension, passages).items():
            found.setdefault(index, []).extend(entries)
    return found
