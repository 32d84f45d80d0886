"""What a range of the log reads as, whichever database it comes from: a `Chunk`
(the leaves with their level-0 nodes and audit events, and what their commitments
name), and what a leaf row says it commits to (`entries`), as the checks read it.
Both readers (`read_pg`, `read_sqlite`) build these and the walk and the checks
consume them, so they live apart from either reader."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from transparency import tables


@dataclass
class Chunk:
    # (index, leaf bytes, stored hash, level-0 node, leaf row with its audit event)
    leaves: list
    # Each leaf's commitments with their key ids (`entries`), when they are checked.
    entries: list = field(default_factory=list)
    # {table: {primary key as text: (canonical bytes, the subject of the row's key)}}
    rows: dict = field(default_factory=dict)
    # {key id: (subject, key or None if destroyed, the disposal that destroyed it)}
    keys: dict = field(default_factory=dict)
    # The database vouched for every leaf's fields (`read_pg._VOUCHED`): each leaf's
    # row holds only its action and commitments, and the walk does not compare them.
    vouched: bool = False


# An entry: (table, row, HMAC, key id); a part that is not what a write stores is
# None (a table, a row and an HMAC are text; a key id is an integer).
Entry = tuple[str | None, str | None, str | None, int | None]
_BIGINT = 2**63


def entries(commitments, key_ids) -> list[Entry]:
    """A leaf row's commitments with their key ids. The columns are whatever the
    database holds: rewritten, they may hold anything JSON can. Each unusable part is
    None, for the checks to report at the leaf's index (never a query or type error
    that would stop the walk)."""
    if not isinstance(commitments, list):
        commitments = [commitments]
    if not isinstance(key_ids, list):
        key_ids = []
    out = []
    for n, c in enumerate(commitments):
        c = c if isinstance(c, dict) else {}
        key_id = key_ids[n] if n < len(key_ids) else None
        out.append(
            (
                _str(c.get("table")),
                _str(c.get("row")),
                _str(c.get("hmac")),
                key_id
                if type(key_id) is int and -_BIGINT <= key_id < _BIGINT  # not a bool
                else None,
            )
        )
    return out


def _str(value) -> str | None:
    return value if isinstance(value, str) else None


def wanted_rows(said: list[list[Entry]]) -> tuple[dict[str, list[str]], set[int]]:
    """The rows to read, by table (only keys their table's primary key can hold), and
    the key ids."""
    wanted: dict[str, set[str]] = {}
    key_ids: set[int] = set()
    for leaf in said:
        for table, pk, _, key_id in leaf:
            if table is not None and pk is not None and _is_key(table, pk):
                wanted.setdefault(table, set()).add(pk)
            if key_id is not None:
                key_ids.add(key_id)
    return {t: sorted(ids) for t, ids in wanted.items()}, key_ids


def _is_key(table: str, pk: str) -> bool:
    """Whether `pk` is a primary key of `table` as the leaf names it (the text the
    readers give back): a canonical integer or hyphenated UUID, or text without the
    comma the readers join keys with."""
    spec = tables.get(table)
    if spec is None:
        return False
    kind = spec.model._meta.pk.get_internal_type()
    if kind in ("AutoField", "BigAutoField", "IntegerField", "BigIntegerField"):
        try:
            return str(int(pk)) == pk and -_BIGINT <= int(pk) < _BIGINT
        except ValueError:
            return False
    if kind == "UUIDField":
        try:
            return str(uuid.UUID(pk)) == pk
        except ValueError:
            return False
    return "," not in pk and "\x00" not in pk
