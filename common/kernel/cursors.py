"""Statements whose values the server binds, for the few the kernel sends often.

Django's psycopg cursor binds client-side: psycopg parses each statement for its
`%s` placeholders (caching only statements under 4 KiB with at most 50 values) and
quotes every value into the text: a registration's one 8 KiB statement with 99
values, a WSP batch's lookups of 2,000 digests as 2,000 quoted literals in an IN
list (docs/performance.md has the figures). `server_bound` gives Django's cursor
wrapper (error translation, query logging, execute wrappers) over psycopg's
RawCursor, which sends the statement as it is and the values apart, as their types
(a uuid as uuid, a list as an array, a string untyped for the server to take as the
column's type); `numbered` writes a statement's `%s` as PostgreSQL's `$1`, `$2`, …
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import AbstractContextManager

from common.kernel import compat


@functools.lru_cache(maxsize=512)
def numbered(statement: str) -> str:
    """The statement with PostgreSQL's own placeholders ($1, $2, …) for psycopg's %s."""
    pieces = statement.split("%s")
    if any("%" in piece for piece in pieces):
        raise ValueError("a statement of the kernel holds a % that is no placeholder")
    return "".join(f"{piece}${n}" for n, piece in enumerate(pieces[:-1], 1)) + pieces[-1]


def server_bound(connection) -> AbstractContextManager[Iterator]:
    """A cursor of this (PostgreSQL) connection, wrapped as Django wraps its own, that
    takes statements with $n placeholders (`numbered`) and has the server bind them."""
    return compat.server_bound_cursor(connection)
