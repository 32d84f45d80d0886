"""What the database holds of the soak, read as a superuser into `invariants.Stored`."""

from __future__ import annotations

import psycopg

from tests.soak.invariants import Stored

LINKS = "grounding_groundinglink"
HISTORY = "grounding_historicalgroundinglink"
AUDIT = "policies_auditevent"
# Every soak link carries an owner_ref of this prefix; every soak request an id of it.
OWNER_PREFIX = "role:soak-"
REQUEST_PREFIX = "soak-"


def read(conn: psycopg.Connection) -> Stored:
    stored = Stored()
    for grounding_id, owner_ref, revision in conn.execute(
        f"SELECT grounding_id::text, owner_ref, revision FROM {LINKS} WHERE owner_ref LIKE %s",
        (OWNER_PREFIX + "%",),
    ):
        stored.links[grounding_id] = (owner_ref, revision)
    for grounding_id, rows in conn.execute(
        f"SELECT h.grounding_id::text, count(*) FROM {HISTORY} h "
        f"JOIN {LINKS} l USING (grounding_id) WHERE l.owner_ref LIKE %s GROUP BY 1",
        (OWNER_PREFIX + "%",),
    ):
        stored.history[grounding_id] = rows
    for request_id, outcome, grounding_id in conn.execute(
        f"SELECT request_id, outcome, grounding_id::text FROM {AUDIT} WHERE request_id LIKE %s",
        (REQUEST_PREFIX + "%",),
    ):
        stored.outcomes.setdefault(request_id, set()).add(outcome)
        if outcome == "applied":
            stored.applied.setdefault(request_id, [])
            if grounding_id:
                stored.applied[request_id].append(grounding_id)
    return stored


def link_state(conn: psycopg.Connection, grounding_id: str) -> tuple[int, int]:
    """(revision, history rows) of one link."""
    return conn.execute(
        f"SELECT l.revision, (SELECT count(*) FROM {HISTORY} h WHERE h.grounding_id = "
        f"l.grounding_id) FROM {LINKS} l WHERE l.grounding_id = %s",
        (grounding_id,),
    ).fetchone()
