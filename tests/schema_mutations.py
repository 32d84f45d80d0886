"""Shared by the tests against jsonschema: where a JSON value can be mutated, and the
words of a schema most likely to make a mutated value valid again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def schema_words(node: Any) -> Iterator[str]:
    """Every enum/const string and property name of a schema: likely-valid values."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("enum", "required") and isinstance(value, list):
                yield from (v for v in value if isinstance(v, str))
            elif key == "const" and isinstance(value, str):
                yield value
            elif key == "properties" and isinstance(value, dict):
                yield from value
            yield from schema_words(value)
    elif isinstance(node, list):
        for item in node:
            yield from schema_words(item)


def paths(node: Any, path: tuple = ()) -> Iterator[tuple]:
    """Every location in a JSON value, the root included, as a tuple of keys/indices."""
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from paths(value, (*path, index))


def at(value: Any, path: tuple) -> Any:
    for part in path:
        value = value[part]
    return value
