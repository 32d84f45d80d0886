"""Reads at scale: a list page at each corpus size beside one raw psycopg query
returning the same page (its floor), each ordering's first page and a page from the
middle of the list (through a cursor), and revisions/{n} of a link with 1,000
revisions.

The corpus is the link tables alone: the step empties them (the earlier steps'
figures are taken by then) and COPYs clones of one registered link up to each size,
a quarter of them matching the list's filter. BENCH_REUSE_DB=1 keeps what an
earlier run seeded; sizes already exceeded are then not measured.
"""

from __future__ import annotations

import os
import statistics
import time

from django.db import connection

from bench import app, seed
from bench import rounds as turns
from bench.ratios import ORDERINGS
from bench.workloads.common import env_int, ms, p50_ms, percentile, raw_conn, template_link

SCALES = (10_000, 100_000, 1_000_000)
# Timed calls per page and size (BENCH_READ_CALLS; `make bench-smoke` makes few).
CALLS = max(1, env_int("BENCH_READ_CALLS", 30))
KINDS = ("quotation", "paraphrase", "inferential", "contextual")
# index % 4 == 1 is paraphrase, index % 2 == 1 is admitted: a quarter of the corpus.
FILTER = {"dimension": app.DIMENSION, "record_state": "admitted", "support_kind": "paraphrase"}
LIST = "/api/v1/groundings/?" + "&".join(f"{k}={v}" for k, v in FILTER.items())

# The page the list shows (every column a link document renders, its records
# aggregated per link), filtered and ordered as the list is, in one statement.
_ASSESSMENT_KEYS = ("assessment_ref", "reviewer_ref", "reviewer_kind", "authority_ref",
                    "method_ref", "verdict", "assessed_input_refs", "grounding_revision",
                    "recorded_revision", "rationale_ref", "competing_assessment_refs",
                    "selection_basis_ref", "assessed_at", "metric_binding",
                    "coverage_population", "uncertainty_binding",
                    "structural_report_ref")  # fmt: skip
RAW_PAGE = f"""
SELECT l.grounding_id, l.revision, l.master_ref, l.record_state, l.recheck_state,
  l.display_state, l.displayed_verdict, l.basis_revision, d.name, p.name, p.version,
  l.owner_ref, l.related_link_refs, l.identity_decision,
  s.binding_id, s.bound_in_revision, s.statement_ref, s.answer_revision_ref,
  s.answer_revision_provisional, s.answer_selector, s.answer_representation, s.claim_scope,
  s.finalization_binding, s.rebind_requirement,
  b.binding_id, b.bound_in_revision, b.passage_id, b.passage_ref, b.source_revision_binding,
  b.retrieval_observation_ref, b.representation_check, l.resolution_state,
  e.access_label, e.locator, e.canonical_url, e.title, c.text,
  b.source_selector, b.selector_profile, b.context_ref, b.transformation_ref, o.anchor_result,
  l.support_kind, l.support_scope, l.support_limits, l.support_verdict_ref, l.use_basis,
  l.generation_evidence_ref, l.asserted_at, l.observed_at, l.applicability_interval,
  l.statement_time_ref, l.review_due, l.time_uncertainty, l.change_ref, l.predecessor_ref,
  l.revision_reason, l.disposition_policy_ref, l.disposition_receipt_ref,
  l.disclosure_policy_ref, l.recipient_scope, l.redaction_profile, l.rights_ref,
  l.safety_policy_ref, l.mapping_profile_ref, l.endpoint_role_map,
  w.reason, w.authority_ref, w.scope, w.decision_ref, w.recorded_at, w.grounding_revision,
  (SELECT coalesce(json_agg(json_build_object(
     {", ".join(f"'{k}', a.{k}" for k in _ASSESSMENT_KEYS)}) ORDER BY a.recorded_revision), '[]')
   FROM grounding_assessment a WHERE a.link_id = l.grounding_id) AS assessments,
  (SELECT coalesce(json_agg(json_build_object('evidence_set_ref', es.evidence_set_ref,
     'membership_role', m.membership_role, 'added_in_set_revision', m.added_in_set_revision)),
     '[]')
   FROM grounding_evidencesetmembership m
   JOIN grounding_evidenceset es ON es.evidence_set_id = m.evidence_set_id
   WHERE m.link_id = l.grounding_id AND m.removed_in_set_revision IS NULL) AS evidence_sets
FROM grounding_groundinglink l
JOIN policies_dimension d ON d.id = l.dimension_id
JOIN policies_profile p ON p.id = l.profile_id
JOIN grounding_statementbinding s ON s.binding_id = l.current_statement_id
JOIN grounding_passagebinding b ON b.binding_id = l.current_passage_id
LEFT JOIN evidence_passage e ON e.passage_id = b.passage_id
LEFT JOIN evidence_content c ON c.sha256 = e.content_id
LEFT JOIN grounding_anchorobservation o ON o.observation_id = l.current_anchor_observation_id
LEFT JOIN grounding_withdrawal w ON w.link_id = l.grounding_id
WHERE d.name = %(dimension)s AND l.record_state = %(record_state)s
  AND l.support_kind = %(support_kind)s
ORDER BY l.grounding_id DESC
LIMIT 50
"""


# The figures of the largest size, repeated at the top level of the step.
HEADLINE = ("list_page_size", "list_queries", "list_p50_ms", "list_p99_ms", "raw_p50_ms")


def scales() -> list[int]:
    """BENCH_READ_SCALES (comma-separated), else the sizes of SCALES up to
    BENCH_READ_LINKS (default 1,000,000), that size included."""
    named = os.environ.get("BENCH_READ_SCALES")
    if named:
        return sorted({int(s) for s in named.split(",") if s.strip()})
    largest = env_int("BENCH_READ_LINKS", SCALES[-1])
    return sorted({s for s in SCALES if s < largest} | {largest})


# Clone n's states: every other one admitted, the support kinds in turn. Its
# observed_at a scrambled number of seconds before the template's (so observed_at
# order is not registration order), its revision 1 to 3 (a third of the corpus ties
# on each: the orderings' tie-breaks are paged through).
VARY = {
    "record_state": "(ARRAY['candidate', 'admitted'])[mod(n, 2) + 1]",
    "support_kind": f"(ARRAY[{', '.join(repr(k) for k in KINDS)}])[mod(n, 4) + 1]",
    "observed_at": "t.observed_at - mod(n * 7919, 1000003) * interval '1 second'",
    "revision": "mod(n, 3) + 1",
}


def _empty_link_tables() -> None:
    """The link tables (and every table referencing them) emptied, history included."""
    models = (app.GroundingLink, app.StatementBinding, app.PassageBinding)
    tables = [m._meta.db_table for m in models]
    tables += [m.history.model._meta.db_table for m in models]
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {', '.join(tables)} CASCADE")


def _grow(template, target: int) -> float:
    """Clones of the template, made in the database, until the link table holds
    `target` links; then ANALYZE."""
    have = app.GroundingLink.objects.count()
    missing = target - have
    started = time.perf_counter()
    chunk = 100_000
    with raw_conn() as conn:
        for offset in range(0, max(0, missing), chunk):
            seed.grow_links(conn, template, min(chunk, missing - offset), first=have + offset,
                            history_start=50_000_000, vary=VARY)  # fmt: skip
        conn.execute("ANALYZE")
        conn.commit()
    return time.perf_counter() - started


def _timed(client, url: str, n: int = CALLS) -> tuple[list[float], int]:
    """n timed GETs (after one untimed), and the queries of the last."""
    from django.test.utils import CaptureQueriesContext

    client.get(url)
    samples = []
    queries = 0
    for _ in range(n):
        with CaptureQueriesContext(connection) as ctx:
            started = time.perf_counter()
            response = client.get(url)
            samples.append(time.perf_counter() - started)
        assert response.status_code == 200, response.content[:300]
        queries = len(ctx.captured_queries)
    return samples, queries


def _list_beside_raw(client, conn, n: int = CALLS) -> dict:
    """n timed GETs of the list page, each followed by one timed RAW_PAGE (fetching
    every row), after one untimed of each; so that a busy machine slows both alike."""
    from django.test.utils import CaptureQueriesContext

    page = [link["grounding_id"] for link in client.get(LIST).json()["results"]]
    raw_ids = [str(row[0]) for row in conn.execute(RAW_PAGE, FILTER).fetchall()]
    assert raw_ids == page, "the raw query and the list disagree on the page"
    listed, raw = [], []
    for _ in range(n):
        with CaptureQueriesContext(connection) as ctx:
            started = time.perf_counter()
            response = client.get(LIST)
            listed.append(time.perf_counter() - started)
        assert response.status_code == 200, response.content[:300]
        started = time.perf_counter()
        conn.execute(RAW_PAGE, FILTER).fetchall()
        raw.append(time.perf_counter() - started)
    conn.rollback()
    return {
        "list_page_size": len(page),
        "list_queries": len(ctx.captured_queries),
        "list_p50_ms": p50_ms(listed),
        "list_p99_ms": ms(percentile(listed, 0.99)),
        "raw_p50_ms": p50_ms(raw),
    }


def _columns(ordering: str) -> tuple[str, ...]:
    """The columns the list pages over for `ordering` (grounding.api.filters.ORDERINGS):
    grounding_id breaks ties, in the same direction."""
    if ordering.lstrip("-") == "grounding_id":
        return (ordering,)
    return (ordering, f"{'-' if ordering.startswith('-') else ''}grounding_id")


def _middle_cursor(ordering: str) -> tuple[str, str]:
    """The `cursor` of the list's page that starts in the middle of the filtered links
    in `ordering` (encoded as DRF encodes one, its position as LinkCursorPagination
    writes it), and the id that page must start with."""
    import base64
    from urllib.parse import urlencode

    columns = _columns(ordering)
    links = app.GroundingLink.objects.filter(
        dimension__name=FILTER["dimension"],
        record_state=FILTER["record_state"],
        support_kind=FILTER["support_kind"],
    ).order_by(*columns)
    middle = links.count() // 2
    rows = links.values_list(columns[0].lstrip("-"), "grounding_id")[middle : middle + 2]
    (value, key), (_, first) = rows
    # A cursor names the ordering it was made for (`<ordering>|<position>`).
    if len(columns) == 1:
        position = f"{ordering}|{key}"
    else:
        shown = value.isoformat() if hasattr(value, "isoformat") else value
        position = f"{ordering}|{shown}|{key}"
    cursor = base64.b64encode(urlencode({"p": position}).encode("ascii")).decode("ascii")
    return cursor, str(first)


def _orderings(client, n: int = CALLS) -> dict:
    """Each ordering's first page and the page from the middle of the list, taking
    turns, p50 of n calls each (after one untimed); `p50_ms` is the slower of the two,
    what the ordering's scaling ratio reads."""
    from urllib.parse import urlencode

    out = {}
    for ordering in ORDERINGS:
        cursor, starts_with = _middle_cursor(ordering)
        first_url = f"{LIST}&ordering={ordering}"
        middle_url = f"{LIST}&{urlencode({'ordering': ordering, 'cursor': cursor})}"
        page = client.get(middle_url).json()["results"]
        assert page and page[0]["grounding_id"] == starts_with, (ordering, page[:1])
        client.get(first_url)
        first, middle = [], []
        for _ in range(n):
            for url, samples in ((first_url, first), (middle_url, middle)):
                started = time.perf_counter()
                response = client.get(url)
                samples.append(time.perf_counter() - started)
                assert response.status_code == 200, response.content[:300]
        out[ordering] = {"first_p50_ms": p50_ms(first), "middle_p50_ms": p50_ms(middle),
                         "p50_ms": max(p50_ms(first), p50_ms(middle))}  # fmt: skip
    return out


def reads_at_scale(tokens: dict) -> dict:
    from django.test import Client

    reuse = os.environ.get("BENCH_REUSE_DB") == "1"
    if not reuse:
        _empty_link_tables()
    template_id = template_link()
    with raw_conn() as conn:
        template = seed.template_rows(conn, template_id)
    client = Client(HTTP_AUTHORIZATION=f"Token {tokens['curator']}")
    at: dict[str, dict] = {}
    sizes = scales()
    rounds: list[dict] = []
    for size in sizes:
        if app.GroundingLink.objects.count() > size:
            continue
        seconds = _grow(template, size)
        with raw_conn() as conn:
            figures = _list_beside_raw(client, conn)
            if size == sizes[-1]:
                # At the largest size, list_over_raw's rounds (bench/rounds.py): the
                # first above and more of the same, each CALLS pages taking turns.
                more = max(1, env_int("BENCH_ROUNDS", turns.DEFAULT)) - 1
                rounds = [figures, *(_list_beside_raw(client, conn) for _ in range(more))]
                rounds = [{k: r[k] for k in ("list_p50_ms", "raw_p50_ms")} for r in rounds]
        at[str(size)] = {
            "links": app.GroundingLink.objects.count(),
            "seed_seconds": round(seconds, 1),
            **figures,
            "orderings": _orderings(client),
        }
    largest = at[max(at, key=int)] if at else {}
    return {
        "rounds": rounds,
        "links": app.GroundingLink.objects.count(),
        "calls": CALLS,
        "scales": at,
        **{k: largest[k] for k in HEADLINE if k in largest},
        "revisions": _revisions(client),
        "targets": {"list_queries": 6, "list_p50_ms": 30},
    }


def _revisions(client) -> dict:
    """revisions/{n} of one link revised BENCH_REVISION_DEPTH [1000] - 1 times, at n = 1,
    100 and the depth (`make bench-smoke` revises to a small depth: the 999 revisions
    were 40 of its seconds, timing nothing it reports)."""
    curator = app.curator()
    deep = template_link()
    depth_wanted = max(2, env_int("BENCH_REVISION_DEPTH", 1000))
    for revision in range(1, depth_wanted):
        app.revise(actor=curator, grounding_id=deep, expected_revision=revision,
                   changes={"owner_ref": f"role:o{revision}",
                            "revision_reason": f"step {revision}"})  # fmt: skip
    revisions = {}
    for depth in sorted({d for d in (1, 100) if d <= depth_wanted} | {depth_wanted}):
        samples, queries = _timed(client, f"/api/v1/groundings/{deep}/revisions/{depth}/")
        revisions[str(depth)] = {"p50_ms": round(statistics.median(samples) * 1000, 2),
                                 "queries": queries}  # fmt: skip
    return revisions
