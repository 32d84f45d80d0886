"""A typed client generated from /api/schema/ (openapi-python-client) walks a link's
whole life cycle against a live server, over real HTTP: WSP import, register, read
(ETag, If-None-Match), partial PATCH with If-Match (and the body's expected_revision),
assess, revisions, each projection format, change notification, anchor observation,
from-citations, a cursor-paged list, withdraw; and each refusal it meets is parsed as
the generated problem model.

The generator runs as a program on the schema the server serves, once per module;
the package it writes into a scratch directory is imported and used as a client
would use it: only its typed functions (`<tag>.<operation>.sync_detailed`) and its
models, never raw requests. Every client raises on a status its operation does not
declare (`raise_on_unexpected_status`), every answer is validated strictly against
the served schema, and every parsed answer is checked for members its model does not
declare: an answer the description does not say fails the walk.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.test.utils import modify_settings

from tests import factories
from tests.api.strict_responses import served_schema
from tests.citations.helpers import external, openai_body
from tests.evidence.conftest import load as load_wsp

GENERATOR = Path(sys.executable).with_name("openapi-python-client")
PACKAGE = "grounding_client"
CANONICAL_URL = "https://example.org/cafe"  # the extract fixture's one document
# Members that are open by design (a model keeps them in additional_properties):
# a provider's own fields, the Web Annotation's JSON-LD context and `grounding:`
# extension members (the declared `grounding:state` object's keys among them), the
# PROV-O graph as JSON-LD.
OPEN = re.compile(
    r"^(/provider_fields/|/document/context/\d+/|/document/grounding:"
    r"|/document/groundingstate/grounding:|/jsonld/)"
)
GROUNDING_OPERATIONS = (
    "groundings_create", "groundings_read", "groundings_list",
    "groundings_partial_update", "groundings_assessments_create",
    "groundings_revisions_list", "groundings_revision_read",
    "groundings_projection_retrieve", "groundings_withdrawal_create",
    "groundings_from_citations", "groundings_anchor_observations_create",
)  # fmt: skip


@pytest.fixture(scope="module")
def generated_client(live_server, tmp_path_factory, django_db_blocker):
    """The generated package, imported (generated once per module: it takes seconds)."""
    if not GENERATOR.exists() and shutil.which("openapi-python-client") is None:
        pytest.skip("openapi-python-client is not installed (the dev extras carry it)")
    # pytest-django lets the live server's host and the database in per test; this
    # runs before any (the schema's answer counts its throttle in the database).
    host = urlsplit(live_server.url).hostname
    with modify_settings(ALLOWED_HOSTS={"append": host}), django_db_blocker.unblock():
        schema = requests.get(
            f"{live_server.url}/api/schema/",
            headers={"Accept": "application/vnd.oai.openapi+json"},
            timeout=30,
        )
    assert schema.status_code == 200
    where = tmp_path_factory.mktemp("generated")
    (where / "openapi.json").write_bytes(schema.content)
    (where / "config.yaml").write_text(
        f"project_name_override: grounding-client\npackage_name_override: {PACKAGE}\n"
        "post_hooks: []\n",
        encoding="utf-8",
    )
    generator = str(GENERATOR) if GENERATOR.exists() else "openapi-python-client"
    run = subprocess.run(
        [generator, "generate", "--path", "openapi.json", "--config", "config.yaml",
         "--meta", "none", "--output-path", PACKAGE],
        cwd=where, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    # Every schema became a model: nothing was dropped as unprocessable.
    assert "Unable to process schema" not in run.stdout + run.stderr, run.stdout
    sys.path.insert(0, str(where))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(where))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


class _Checked:
    """A generated operation whose every parsed answer declares all it carries."""

    def __init__(self, module) -> None:
        self.module = module

    def sync_detailed(self, *args, **kwargs):
        response = self.module.sync_detailed(*args, **kwargs)
        undeclared = [p for p in _undeclared(response.parsed) if not OPEN.match(p)]
        assert undeclared == [], (self.module.__name__, undeclared)
        return response


def _operations(tag: str, *names: str) -> SimpleNamespace:
    return SimpleNamespace(
        **{name: _Checked(importlib.import_module(f"{PACKAGE}.api.{tag}.{name}")) for name in names}
    )


@pytest.fixture
def api(generated_client):
    """The generated package: its models, its client classes and the operations used."""
    return SimpleNamespace(
        models=importlib.import_module(f"{PACKAGE}.models"),
        client=importlib.import_module(f"{PACKAGE}.client"),
        types=importlib.import_module(f"{PACKAGE}.types"),
        evidence=_operations(
            "evidence", "evidence_wsp_imports_create", "evidence_passages_retrieve"
        ),
        groundings=_operations("groundings", *GROUNDING_OPERATIONS),
        decisions=_operations("disclosure_decisions", "disclosure_decisions_create"),
        changes=_operations("change_notifications", "change_notifications_create"),
    )


@pytest.fixture
def clients(api, live_server, world):
    """An authenticated generated client per role of the world, and an anonymous one;
    closed at the end, so no keep-alive connection outlives the test in the server."""

    def strictly(response) -> None:
        """Each answer of the live server is what the schema declares, undeclared
        members refused, as for the Django test client (tests/api/conftest.py)."""
        response.read()
        assert served_schema().check(
            response.request.method,
            response.request.url.path,
            response.status_code,
            response.headers.get("Content-Type", ""),
            response.content,
        )

    hooks = {"event_hooks": {"response": [strictly]}}

    def client_for(user):
        return api.client.AuthenticatedClient(
            base_url=live_server.url,
            token=factories.token_for(user),
            prefix="Token",
            raise_on_unexpected_status=True,
            httpx_args=hooks,
        )

    roles = ("curator", "reviewer", "access_steward", "projection_agent", "outsider")
    with contextlib.ExitStack() as stack:
        opened = {role: stack.enter_context(client_for(getattr(world, role))) for role in roles}
        opened["anonymous"] = stack.enter_context(
            api.client.Client(
                base_url=live_server.url, raise_on_unexpected_status=True, httpx_args=hooks
            )
        )
        yield SimpleNamespace(**opened)


def _problem(api, response, status: int, code: str):
    """The response parsed as the generated Problem model, with this status and code."""
    assert response.status_code == status, response.content
    assert response.headers["Content-Type"].startswith("application/problem+json")
    problem = response.parsed
    assert isinstance(problem, api.models.Problem), type(problem)
    assert (problem.status, problem.code) == (status, code), (problem.status, problem.code)
    assert problem.title and problem.detail and problem.type_
    return problem


def test_a_generated_client_walks_a_link_through_its_life_cycle(api, clients, world):
    passage_id = _import(api, clients, world)
    link = _register(api, clients, world, passage_id)
    gid = link.grounding_id
    _read_with_etags(api, clients, gid)
    _revise(api, clients, gid)
    _assess(api, clients, gid)
    _revisions(api, clients, gid)
    _project(api, clients, world, gid)
    _notify_change(api, clients, world, gid)
    _observe_anchor(api, clients, gid)
    other = _from_citations(api, clients, world)
    _page(api, clients, world, [other, gid])
    _withdraw(api, clients, gid)


def _import(api, clients, world):
    """WSP import (curator): 201 with its report, 200 with the same report on replay."""
    body = api.models.WspResponseV3Request.from_dict(load_wsp("extract"))
    create = api.evidence.evidence_wsp_imports_create
    first = create.sync_detailed(client=clients.curator, body=body, dimension=world.dimension.name)
    assert first.status_code == 201, first.content
    report = first.parsed
    assert isinstance(report, api.models.ImportReport)
    assert report.execution_id == "exec-extract-001"
    counts = report.observations
    assert (counts.received, counts.created, counts.duplicates) == (1, 1, 0)
    assert [p.observation_id for p in report.passages] == ["obs-x1"]
    assert report.passages[0].duplicate_of is None
    assert isinstance(report.passages[0].passage_id, uuid.UUID)

    again = create.sync_detailed(client=clients.curator, body=body, dimension=world.dimension.name)
    assert again.status_code == 200, again.content
    assert again.parsed.import_id == report.import_id
    assert again.parsed.passages[0].passage_id == report.passages[0].passage_id

    passage = api.evidence.evidence_passages_retrieve.sync_detailed(
        report.passages[0].passage_id, client=clients.curator
    )
    assert passage.status_code == 200, passage.content
    assert isinstance(passage.parsed, api.models.Passage)
    assert passage.parsed.canonical_url == CANONICAL_URL
    assert passage.parsed.text.endswith("The bridge opened in 1932.")
    envelope = passage.parsed.retrieval_observation
    assert (envelope.execution_id, envelope.cache_status.disposition.value) == (
        "exec-extract-001",
        "miss",
    )
    return report.passages[0].passage_id


def _register(api, clients, world, passage_id):
    payload = factories.link_payload(world.dimension, world.profile)
    payload["passage"] = {"passage_id": str(passage_id)}
    created = api.groundings.groundings_create.sync_detailed(
        client=clients.curator, body=api.models.RegisterRequest.from_dict(payload)
    )
    assert created.status_code == 201, created.content
    link = created.parsed
    assert isinstance(link, api.models.Link)
    assert (link.revision, link.record_state.value) == (1, "candidate")
    assert link.display_state.value == "unassessed"
    assert link.passage.passage_id == passage_id
    assert created.headers["ETag"] == '"1"'
    assert created.headers["Location"].endswith(f"/api/v1/groundings/{link.grounding_id}/")
    return link


def _read_with_etags(api, clients, gid):
    read = api.groundings.groundings_read
    fetched = read.sync_detailed(gid, client=clients.curator)
    assert fetched.status_code == 200, fetched.content
    assert fetched.headers["ETag"] == '"1"'
    assert isinstance(fetched.parsed, api.models.Link)
    assert fetched.parsed.statement.statement_ref == "urn:answer:42#s3"
    anchor, statement = fetched.parsed.anchor, fetched.parsed.statement
    assert anchor.selector_profile == "nfc-codepoint-halfopen@1"
    # A selector is one variant per `type`, each with its own members.
    assert isinstance(anchor.source_selector, api.models.TextQuoteSelector)
    quote = anchor.source_selector
    assert (quote.type_, quote.prefix, quote.exact, quote.suffix) == (
        "TextQuoteSelector",
        "The bridge ",
        "opened in 1932",
        ".",
    )
    assert isinstance(statement.answer_selector, api.models.TextPositionSelector)
    assert (statement.answer_selector.start, statement.answer_selector.end) == (10, 58)
    # The ETag of the last read, sent back: nothing changed, 304 and no body.
    unchanged = read.sync_detailed(gid, client=clients.curator, if_none_match='"1"')
    assert (unchanged.status_code, unchanged.content) == (304, b"")
    assert unchanged.headers["ETag"] == '"1"'


def _revise(api, clients, gid):
    """A partial PATCH: one member of one group, merged into the link's."""
    models, patch = api.models, api.groundings.groundings_partial_update
    body = models.PatchedReviseRequest(
        revision_reason="scope narrowed",
        support=models.SupportPatchRequest(
            support_scope=models.SupportScope(covers="the opening year only")
        ),
    )
    revised = patch.sync_detailed(gid, client=clients.curator, body=body, if_match='"1"')
    assert revised.status_code == 200, revised.content
    assert revised.headers["ETag"] == '"2"'
    link = revised.parsed
    assert link.revision == 2
    assert link.support.support_scope.covers == "the opening year only"
    assert link.support.support_kind.value == "quotation"  # kept: the group was merged
    assert link.continuity.revision_reason == "scope narrowed"

    # The same If-Match again is stale now: 412, with the revision to retry against.
    stale = patch.sync_detailed(gid, client=clients.curator, body=body, if_match='"1"')
    assert _problem(api, stale, 412, "revision_mismatch").current_revision == 2

    # The body's expected_revision is the alternative to If-Match.
    by_body = patch.sync_detailed(
        gid,
        client=clients.curator,
        body=models.PatchedReviseRequest(
            revision_reason="handover", expected_revision=2, owner_ref="role:other-curator"
        ),
    )
    assert by_body.status_code == 200, by_body.content
    assert (by_body.parsed.revision, by_body.parsed.owner_ref) == (3, "role:other-curator")
    assert by_body.headers["ETag"] == '"3"'


def _assess(api, clients, gid):
    assess = api.groundings.groundings_assessments_create
    body = factories.assessment_body(3, assessment_ref="urn:eval:walk/1")
    assessed = assess.sync_detailed(
        gid,
        client=clients.reviewer,
        body=api.models.AssessmentRequest.from_dict(body),
        if_match='"3"',
    )
    assert assessed.status_code == 201, assessed.content
    result = assessed.parsed
    assert isinstance(result, api.models.AssessmentResult)
    assert (result.revision, result.grounding_revision) == (4, 3)
    assert result.assessment_ref == "urn:eval:walk/1"
    assert assessed.headers["ETag"] == '"4"'

    # Assessed inputs that name an earlier revision: 409, nothing recorded.
    mismatch = assess.sync_detailed(
        gid,
        client=clients.reviewer,
        body=api.models.AssessmentRequest.from_dict(factories.assessment_body(1)),
        if_match='"4"',
    )
    _problem(api, mismatch, 409, "assessment_input_mismatch")

    link = api.groundings.groundings_read.sync_detailed(gid, client=clients.curator).parsed
    assert link.revision == 4
    assert [(a.assessment_ref, a.current) for a in link.assessments] == [("urn:eval:walk/1", True)]


def _revisions(api, clients, gid):
    listed = api.groundings.groundings_revisions_list.sync_detailed(gid, client=clients.curator)
    assert listed.status_code == 200, listed.content
    history = listed.parsed
    assert isinstance(history, api.models.RevisionList)
    assert (history.grounding_id, history.revision) == (gid, 4)
    assert [r.revision for r in history.results] == [1, 2, 3, 4]
    assert [r.reason for r in history.results][1:3] == ["scope narrowed", "handover"]

    read = api.groundings.groundings_revision_read
    first = read.sync_detailed(gid, 1, client=clients.curator)
    second = read.sync_detailed(gid, 2, client=clients.curator)
    assert first.status_code == second.status_code == 200, (first.content, second.content)
    assert (first.parsed.revision, second.parsed.revision) == (1, 2)
    assert first.parsed.support.support_scope.covers == "opening year"
    assert second.parsed.support.support_scope.covers == "the opening year only"
    assert (first.parsed.owner_ref, second.parsed.owner_ref) == ("role:grounding-curator",) * 2


def _project(api, clients, world, gid):
    """Each projection format answers its own model, under a recorded decision."""
    models, project = api.models, api.groundings.groundings_projection_retrieve
    query = {"recipient": "partner:acme", "purpose": "citation-display"}
    undecided = project.sync_detailed(gid, client=clients.projection_agent, **query)
    _problem(api, undecided, 403, "disclosure_not_decided")

    decided = api.decisions.disclosure_decisions_create.sync_detailed(
        client=clients.access_steward,
        body=models.DecisionInputRequest.from_dict(
            {
                "decision_ref": "urn:access:walk",
                "dimension": world.dimension.name,
                "recipient_scope": "partner:acme",
                "purpose": "citation-display",
                "fields": ["statement", "support", "passage.locator", "assessments.verdict"],
            }
        ),
    )
    assert decided.status_code == 201, decided.content
    assert isinstance(decided.parsed, models.Decision)
    assert decided.parsed.revoked_at is None

    formats = models.GroundingsProjectionRetrieveFormat
    native = project.sync_detailed(
        gid, client=clients.projection_agent, format_=formats.NATIVE, **query
    )
    assert native.status_code == 200, native.content
    assert native.headers["ETag"] == '"4"'
    body = native.parsed
    assert isinstance(body, models.NativeProjection)
    assert (body.format_, body.revision, body.decision_ref) == ("native", 4, "urn:access:walk")
    assert body.display_state.value == "visible"
    assert body.fields.statement.statement_ref == "urn:answer:42#s3"
    assert [w.value for w in body.withheld] == [
        "anchor.selector",
        "assessments.reviewer",
        "passage.excerpt",
        "passage.title",
    ]

    annotation = project.sync_detailed(
        gid, client=clients.projection_agent, format_=formats.WEB_ANNOTATION, **query
    )
    assert annotation.status_code == 200, annotation.content
    body = annotation.parsed
    assert isinstance(body, models.WebAnnotationProjection)
    assert (body.format_, body.revision) == ("web-annotation", 4)
    assert body.media_type.startswith("application/ld+json")
    assert body.document.type_ == "Annotation"
    assert body.document.motivation == "linking"
    target, passage = body.document.target, body.document.body
    assert (target.type_, target.source, target.id) == (
        "SpecificResource",
        "urn:answer:42@2",
        "urn:answer:42#s3",
    )
    assert isinstance(target.selector, models.TextPositionSelector)
    assert (target.selector.start, target.selector.end) == (10, 58)
    assert passage.source == "urn:wsp:exec-extract-001:obs-x1"
    assert isinstance(passage.selector, api.types.Unset)  # anchor.selector is withheld
    # Declared by the schema (issue 38): a typed member, not an undeclared extra.
    assert "grounding:state" not in body.document.additional_properties
    assert body.document.groundingstate.additional_properties["grounding:revision"] == 4

    graph = project.sync_detailed(
        gid, client=clients.projection_agent, format_=formats.PROV_O, **query
    )
    assert graph.status_code == 200, graph.content
    body = graph.parsed
    assert isinstance(body, models.ProvOProjection)
    assert (body.format_, body.revision, body.media_type) == ("prov-o", 4, "text/turtle")
    assert "prov:" in body.turtle
    assert "@context" in body.jsonld.additional_properties


def _notify_change(api, clients, world, gid):
    """A source change sends the link to review: one new revision, once."""
    models, create = api.models, api.changes.change_notifications_create
    values = {
        "dimension": world.dimension.name,
        "change_ref": "urn:change:walk-1",
        "kind": "source",
        "subject_ref": CANONICAL_URL,
        "observed_at": "2026-12-01T09:00:00Z",
        "reason": "page re-published",
    }
    body = models.ChangeNotificationCreateRequest.from_dict(values)
    first = create.sync_detailed(client=clients.curator, body=body)
    assert first.status_code == 201, first.content
    notice = first.parsed
    assert isinstance(notice, models.ChangeNotification)
    assert (notice.change_ref, notice.affected) == ("urn:change:walk-1", 1)
    assert [(a.grounding_id, a.revision) for a in notice.links] == [(gid, 5)]

    again = create.sync_detailed(client=clients.curator, body=body)
    assert again.status_code == 200, again.content
    assert (again.parsed.affected, again.parsed.notification_id) == (1, notice.notification_id)

    other = models.ChangeNotificationCreateRequest.from_dict({**values, "reason": "another"})
    conflict = create.sync_detailed(client=clients.curator, body=other)
    assert _problem(api, conflict, 409, "change_conflict").change_ref == "urn:change:walk-1"

    link = api.groundings.groundings_read.sync_detailed(gid, client=clients.curator).parsed
    assert (link.revision, link.recheck_state.value) == (5, "pending_review")
    assert link.display_state.value != "visible"

    queue = api.groundings.groundings_list.sync_detailed(
        client=clients.curator,
        dimension=world.dimension.name,
        recheck_state=models.GroundingsListRecheckState.PENDING_REVIEW,
    )
    assert [item.grounding_id for item in queue.parsed.results] == [gid]


def _from_citations(api, clients, world):
    """Provider citations become candidate links; re-posting creates nothing."""
    models, create = api.models, api.groundings.groundings_from_citations
    # The body is one variant per format (the payload its parser reads).
    body = models.FromCitationsOpenaiRequest.from_dict(
        openai_body(
            world,
            answer_revision_ref="urn:answer:77@1",
            passages={
                "https://example.org/bridge?utm_source=openai": external(
                    "https://example.org/bridge"
                )
            },
        )
    )
    first = create.sync_detailed(client=clients.curator, body=body)
    assert first.status_code == 201, first.content
    report = first.parsed
    assert isinstance(report, models.FromCitationsReport)
    assert (report.created, report.replayed, report.format_.value) == (
        1,
        False,
        "openai-responses",
    )
    # The url citation mapped to a passage is created; the file citation and the
    # url citation with no passage are reported skipped, each with its reason.
    assert [c.outcome.value for c in report.citations] == ["created", "skipped", "skipped"]
    assert all(c.reason for c in report.citations[1:])
    assert report.citations[0].grounding_id == report.links[0].grounding_id
    registered = report.links[0].grounding_id
    link = api.groundings.groundings_read.sync_detailed(registered, client=clients.curator)
    assert (link.parsed.record_state.value, link.parsed.support.use_basis.value) == (
        "candidate",
        "unknown",
    )

    again = create.sync_detailed(client=clients.curator, body=body)
    assert again.status_code == 200, again.content
    assert (again.parsed.created, again.parsed.replayed) == (0, True)
    assert [item.grounding_id for item in again.parsed.links] == [registered]
    return registered


def _observe_anchor(api, clients, gid):
    """The reference resolver runs against the imported passage: one new revision."""
    observe = api.groundings.groundings_anchor_observations_create
    observed = observe.sync_detailed(
        gid,
        client=clients.curator,
        body=api.models.BuiltinResolverRequest(resolver=api.models.ResolverEnum.BUILTIN),
        if_match='"5"',
    )
    assert observed.status_code == 201, observed.content
    result = observed.parsed
    assert isinstance(result, api.models.AnchorObservationResult)
    assert (result.revision, result.resolution_state.value) == (6, "resolved")
    anchor = result.anchor_result
    assert (anchor.status.value, anchor.match_count) == ("resolved", 1)
    # "opened in 1932" in "Café Unicode 𝔘 notes.\n\nThe bridge opened in 1932."
    assert [(m.start, m.end) for m in anchor.matches] == [(34, 48)]
    assert observed.headers["ETag"] == '"6"'


def _page(api, clients, world, newest_first):
    """The list, one link a page: the cursor of `next` reaches the other link."""
    listed = api.groundings.groundings_list
    first = listed.sync_detailed(
        client=clients.curator, dimension=world.dimension.name, page_size=1
    )
    assert first.status_code == 200, first.content
    assert [item.grounding_id for item in first.parsed.results] == newest_first[:1]
    assert first.parsed.previous is None
    cursor = parse_qs(urlsplit(first.parsed.next_).query)["cursor"][0]
    second = listed.sync_detailed(
        client=clients.curator, dimension=world.dimension.name, page_size=1, cursor=cursor
    )
    assert [item.grounding_id for item in second.parsed.results] == newest_first[1:]
    assert second.parsed.next_ is None


def _withdraw(api, clients, gid):
    models, withdraw = api.models, api.groundings.groundings_withdrawal_create
    body = models.WithdrawalRequest(
        reason="source retracted", authority_ref="urn:policy:withdrawal@1", scope="display"
    )
    done = withdraw.sync_detailed(gid, client=clients.curator, body=body, if_match='"6"')
    assert done.status_code == 201, done.content
    result = done.parsed
    assert isinstance(result, models.WithdrawalResult)
    assert (result.grounding_id, result.revision, result.reason) == (gid, 7, "source retracted")
    assert done.headers["ETag"] == '"7"'

    link = api.groundings.groundings_read.sync_detailed(gid, client=clients.curator).parsed
    assert (link.revision, link.record_state.value) == (7, "withdrawn")
    assert link.display_state.value == "withdrawn"
    assert link.withdrawal.reason == "source retracted"


def test_each_refusal_parses_as_the_generated_problem_model(api, clients, world):
    """400, 401, 403, 404, 409, 412, 422 and 428, each as the Problem model with its code."""
    models, groundings = api.models, api.groundings
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    gid = link.grounding_id

    missing = groundings.groundings_read.sync_detailed(uuid.uuid4(), client=clients.curator)
    _problem(api, missing, 404, "not_found")
    # Another Dimension's link reads exactly as one that does not exist.
    foreign = groundings.groundings_read.sync_detailed(gid, client=clients.outsider)
    _problem(api, foreign, 404, "not_found")

    anonymous = groundings.groundings_list.sync_detailed(client=clients.anonymous)
    _problem(api, anonymous, 401, "not_authenticated")

    bad_page = groundings.groundings_list.sync_detailed(client=clients.curator, page_size=0)
    problem = _problem(api, bad_page, 400, "validation_error")
    assert [(o.pointer, o.code) for o in problem.offenders] == [("/query/page_size", "type")]

    reason = models.PatchedReviseRequest(revision_reason="handover", owner_ref="role:x")
    patch = groundings.groundings_partial_update
    not_a_revision = patch.sync_detailed(gid, client=clients.curator, body=reason, if_match="3")
    _problem(api, not_a_revision, 400, "invalid_if_match")
    unconditional = patch.sync_detailed(gid, client=clients.curator, body=reason)
    _problem(api, unconditional, 428, "precondition_required")
    stale = patch.sync_detailed(gid, client=clients.curator, body=reason, if_match='"7"')
    assert _problem(api, stale, 412, "revision_mismatch").current_revision == 1
    wrong_role = patch.sync_detailed(gid, client=clients.reviewer, body=reason, if_match='"1"')
    _problem(api, wrong_role, 403, "role_required")

    emptied = patch.sync_detailed(
        gid,
        client=clients.curator,
        body=models.PatchedReviseRequest.from_dict(
            {"revision_reason": "x", "anchor": {"selector_profile": ""}}
        ),
        if_match='"1"',
    )
    problem = _problem(api, emptied, 400, "validation_error")
    # A member a group requires can be left out of a PATCH, but not emptied.
    assert [(o.pointer, o.code) for o in problem.offenders] == [
        ("/anchor/selector_profile", "type"),
        ("/anchor/selector_profile", "required"),
    ]

    withdraw = groundings.groundings_withdrawal_create
    body = models.WithdrawalRequest(reason="retracted", authority_ref="urn:policy:w@1")
    assert (
        withdraw.sync_detailed(gid, client=clients.curator, body=body, if_match='"1"').status_code
        == 201
    )
    twice = withdraw.sync_detailed(gid, client=clients.curator, body=body, if_match='"2"')
    _problem(api, twice, 409, "link_withdrawn")

    document = load_wsp("extract")
    del document["results"][0]["text"]["text_sha256"]
    violation = api.evidence.evidence_wsp_imports_create.sync_detailed(
        client=clients.curator,
        body=models.WspResponseV3Request.from_dict(document),
        dimension=world.dimension.name,
    )
    problem = _problem(api, violation, 422, "wsp_contract_violation")
    assert [(o.pointer, o.code) for o in problem.offenders] == [
        ("/results/0/text/text_sha256", "schema.required")
    ]


def test_if_match_is_optional_where_the_body_can_name_the_revision(api):
    for operation in (
        api.groundings.groundings_partial_update,
        api.groundings.groundings_assessments_create,
        api.groundings.groundings_withdrawal_create,
    ):
        parameter = inspect.signature(operation.module.sync_detailed).parameters["if_match"]
        assert parameter.default is not inspect.Parameter.empty, operation.module.__name__


def _undeclared(value, path="") -> list[str]:
    """Members the server sent that the generated models do not declare (they land
    in a model's additional_properties)."""
    found = []
    if isinstance(value, list):
        for i, item in enumerate(value):
            found += _undeclared(item, f"{path}/{i}")
    elif hasattr(value, "__attrs_attrs__"):
        for attribute in value.__attrs_attrs__:
            member = getattr(value, attribute.name)
            if attribute.name == "additional_properties":
                found += [f"{path}/{key}" for key in member]
            else:
                found += _undeclared(member, f"{path}/{attribute.name}")
    return found
