"""The transactional outbox: the events of an accepted write, in its transaction.

`on_applied` is registered with `policies.audit.on_applied`: every applied audit
event reaches it inside the write's transaction, right after the event was written,
so the outbox rows commit or roll back with the write. A rolled-back write emits
nothing. The deliveries owed to the Dimension's subscriptions are written by the
delivery workers, each subscription's from its place in the transparency log
(`feed.worker.fan_out`); with the log turned off there is no order to take them
from, and this statement writes them with the events.

Which audit actions are events (API.md "Event feed"): a link's operations (one event
per link, `sequence` = the link's revision, so contiguous per link: every revision of
a link is an applied audit event naming it, or a member of an evidence set's change),
a WSP import (one `passage.imported` per passage it stored), and disclosure decisions
(`sequence` 1 recorded, 2 revoked). Everything else (roles, tokens, profiles,
projections, the summary events of a change notification or a from-citations
request) is audited and logged but is no event: nothing a consumer displays changed.

Cost: one statement per write, whatever it emits, and no round trip of its own: it
is sent with the transparency log's queue row as one statement (`common.kernel.along`;
bench `outbox_over_register`: register with the outbox within 1.10× of without).
On PostgreSQL the statement reads
the link's states from the row the write just stored and inserts the events; one
link's event (most writes) by a statement of scalars, several by unnested arrays.
Other databases take the same steps through the ORM (`feed.outbox_orm`).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connections, router

from common.kernel.along import Along
from common.kernel.identifiers import uuid7
from feed import log_link
from feed.choices import EventType
from policies.models import AuditEvent

# Audit action of a link operation -> the event type of each link it names.
LINK_TYPES: dict[str, str] = {
    "register": EventType.REGISTERED,
    "register_bulk": EventType.REGISTERED,
    "revise": EventType.REVISED,
    "bind_assessment": EventType.ASSESSED,
    "record_anchor_observation": EventType.ANCHORED,
    "withdraw": EventType.WITHDRAWN,
    "dispose": EventType.DISPOSED,
    "notify_change": EventType.RECHECK_REQUESTED,
}
# Evidence-set changes move each member link on by one revision, under one audit
# event naming the links in references["links"]: a `revised` event per link.
SET_ACTIONS = frozenset({"create_evidence_set", "change_evidence_set"})
# An import's passages (a WSP import's observations, a PDF's pages), by the import's
# id: its envelope's, or its document's.
IMPORT_ACTIONS = frozenset({"wsp_import", "pdf_import"})
DECISION_TYPES: dict[str, tuple[str, int, str]] = {
    "record_disclosure_decision": (EventType.DECISION_RECORDED, 1, "recorded"),
    "revoke_disclosure_decision": (EventType.DECISION_REVOKED, 2, "revoked"),
}


@dataclass
class Planned:
    """The events one listener call owes, by kind, as the statement's arrays."""

    links: list[tuple[uuid.UUID, uuid.UUID, str, datetime]] = field(default_factory=list)
    imports: list[tuple[uuid.UUID, uuid.UUID, datetime]] = field(default_factory=list)
    decisions: list[tuple[uuid.UUID, str, str, str, int, str, datetime]] = field(
        default_factory=list
    )

    def __bool__(self) -> bool:
        return bool(self.links or self.imports or self.decisions)


def plan(events: Sequence[AuditEvent]) -> Planned:
    """What each applied audit event emits (module docstring), from the event alone."""
    planned = Planned()
    for event in events:
        action = event.action
        if not event.dimension_ref:
            continue
        if action in LINK_TYPES and event.grounding_id is not None:
            planned.links.append(
                (event.event_id, event.grounding_id, LINK_TYPES[action], event.occurred_at)
            )
        elif action in SET_ACTIONS:
            for grounding_id in (event.references or {}).get("links", []):
                planned.links.append(
                    (event.event_id, uuid.UUID(str(grounding_id)), EventType.REVISED,
                     event.occurred_at)
                )  # fmt: skip
        elif action in IMPORT_ACTIONS:
            import_id = (event.references or {}).get("import_id")
            if import_id:
                planned.imports.append((event.event_id, uuid.UUID(import_id), event.occurred_at))
        elif action in DECISION_TYPES and event.decision_ref:
            kind, sequence, state = DECISION_TYPES[action]
            planned.decisions.append(
                (event.event_id, event.decision_ref, event.dimension_ref, kind, sequence, state,
                 event.occurred_at)
            )  # fmt: skip
    return planned


def on_applied(events: Sequence[AuditEvent]) -> list[Along] | None:
    """The audit listener: the events these applied events owe (and, with the log
    turned off, their deliveries). On PostgreSQL, its one statement, which
    `policies.audit` sends with the other listeners' (`common.kernel.along`)."""
    planned = plan(events)
    if not planned:
        return None
    using = router.db_for_write(AuditEvent)
    # With the log on the delivery workers write the deliveries, in log order.
    deliveries = not log_link.log_on()
    if connections[using].vendor == "postgresql":
        return [_statement_postgresql(planned, deliveries)]
    from feed.outbox_orm import write_with_orm

    write_with_orm(using, planned, deliveries)
    return None


def _columns(rows: list[tuple], count: int) -> list[list]:
    return [list(column) for column in zip(*rows, strict=True)] if rows else [[]] * count


# One statement: the events from the rows the write stored (a link's states, an
# import's passages, a decision's Dimension). With the log turned off, it also writes
# a delivery per event for every active subscription of its Dimension that wants its
# type (with the log on, the delivery workers write those: feed.worker.fan_out). Only
# the kinds a write emits are in its statement (a registration's has the links' part
# alone). Event ids are UUIDv7 (time-ordered, as the ORM path's), given with the
# values: a random one (gen_random_uuid) lands on a random leaf of the event_id index,
# which on a large table costs a full page image in the WAL at its first change after
# each checkpoint (about 10 KB per write instead of 0.65 KB). An import's passages are
# not counted before the statement: their ids are random.
LINKS = (
    "l(eid, audit, gid, type, at) AS (SELECT * FROM unnest(%s::uuid[], %s::uuid[], "
    "%s::uuid[], %s::text[], %s::timestamptz[]))",
    "SELECT l.eid, g.dimension_id, l.type, l.gid::text, g.revision, l.at, l.audit, "
    "jsonb_build_object('grounding_id', l.gid::text, 'revision', g.revision, "
    "'record_state', g.record_state, 'recheck_state', g.recheck_state, "
    "'display_state', g.display_state) "
    "FROM l JOIN grounding_groundinglink g ON g.grounding_id = l.gid",
)
IMPORTS = (
    "i(audit, import, at) AS (SELECT * FROM unnest(%s::uuid[], %s::uuid[], %s::timestamptz[]))",
    "SELECT gen_random_uuid(), p.dimension_id, 'org.grounding.passage.imported', "
    "p.passage_id::text, 1, i.at, i.audit, "
    "jsonb_build_object('passage_id', p.passage_id::text, 'import_id', i.import::text) "
    "FROM i JOIN evidence_passage p "
    "ON p.retrieval_observation_id = i.import OR p.document_id = i.import",
)
DECISIONS = (
    "d(eid, audit, ref, dim, type, seq, state, at) AS (SELECT * FROM unnest(%s::uuid[], "
    "%s::uuid[], %s::text[], %s::text[], %s::text[], %s::int[], %s::text[], "
    "%s::timestamptz[]))",
    "SELECT d.eid, n.id, d.type, d.ref, d.seq, d.at, d.audit, "
    "jsonb_build_object('decision_ref', d.ref, 'decision_state', d.state) "
    "FROM d JOIN policies_dimension n ON n.name = d.dim",
)


# Most writes emit one link's event: its values as scalars, the link's row by its key.
# The arrays' form costs the server about 0.3 ms more for that one row (the unnested
# arrays and their join: docs/performance.md "The outbox").
ONE_LINK = (
    "SELECT %s::uuid, g.dimension_id, %s::text, g.grounding_id::text, g.revision, "
    "%s::timestamptz, %s::uuid, jsonb_build_object('grounding_id', g.grounding_id::text, "
    "'revision', g.revision, 'record_state', g.record_state, 'recheck_state', "
    "g.recheck_state, 'display_state', g.display_state) "
    "FROM grounding_groundinglink g WHERE g.grounding_id = %s"
)


def _outbox(inputs: str, selects: str, deliveries: bool) -> str:
    events = (
        "INSERT INTO feed_event (event_id, dimension_id, type, subject, sequence, time, "
        f"audit_event_id, data) {selects}"
    )
    if not deliveries:
        return f"WITH {inputs[:-2]} {events}" if inputs else events
    return (
        f"WITH {inputs}e AS ({events} RETURNING id, dimension_id, type, subject, sequence) "
        "INSERT INTO feed_delivery (webhook_id, event_id, subject, sequence, state, due_at, "
        "attempts, created_at) "
        "SELECT w.webhook_id, e.id, e.subject, e.sequence, 'pending', now(), 0, now() "
        "FROM e JOIN feed_webhook w ON w.dimension_id = e.dimension_id AND w.active "
        "AND (jsonb_array_length(w.event_types) = 0 OR w.event_types @> to_jsonb(e.type))"
    )


@functools.lru_cache(maxsize=32)
def statement(links: bool, imports: bool, decisions: bool, deliveries: bool = False) -> str:
    """The statement of a write emitting these kinds (all False: one link's event)."""
    parts = [part for part, wanted in ((LINKS, links), (IMPORTS, imports),
                                       (DECISIONS, decisions)) if wanted]  # fmt: skip
    if not parts:
        return _outbox("", ONE_LINK, deliveries)
    inputs = "".join(f"{source}, " for source, _ in parts)
    return _outbox(inputs, " UNION ALL ".join(select for _, select in parts), deliveries)


def _statement_postgresql(planned: Planned, deliveries: bool) -> Along:
    if len(planned.links) == 1 and not planned.imports and not planned.decisions:
        audit_id, gid, kind, at = planned.links[0]
        sql = statement(False, False, False, deliveries)
        params = [uuid7(), kind, at, audit_id, gid]
    else:
        params = []
        for rows, count, ids in ((planned.links, 4, True), (planned.imports, 3, False),
                                 (planned.decisions, 7, True)):  # fmt: skip
            if rows:
                params += ([[uuid7() for _ in rows]] if ids else []) + _columns(rows, count)
        kinds = (bool(planned.links), bool(planned.imports), bool(planned.decisions))
        sql = statement(*kinds, deliveries)
    return Along(sql, params)
