"""Fixtures local to the evidence tests: users with roles, tokens, WSP documents."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from rest_framework.test import APIClient

from evidence.models import Content, Passage, RetrievalObservation, Source
from evidence.wsp import validate_response
from policies.governance import record_internal_decisions
from policies.models import AuditEvent, Dimension, DimensionMembership
from tests import factories

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> dict:
    """A fresh deep copy of a fixture document (tests mutate them freely)."""
    return copy.deepcopy(_cached(name))


def offenders_of(document: object) -> list[tuple[str, str]]:
    """(pointer, code) of every offender, in the validator's order."""
    return [(o.pointer, o.code) for o in validate_response(document)]


def counts() -> dict[str, int]:
    """Rows of every evidence table an import writes, and its applied audit events."""
    return {
        "observations": RetrievalObservation.objects.count(),
        "passages": Passage.objects.count(),
        "passage_history": Passage.history.count(),
        "content": Content.objects.count(),
        "sources": Source.objects.count(),
        "source_history": Source.history.count(),
        "applied_audit": AuditEvent.objects.filter(outcome="applied").count(),
    }


def hold_execution(execution_id: str, held, release) -> None:
    """In a transaction of this thread: an uncommitted envelope of `execution_id`,
    holding its unique key until `release` is set, then rolled back. Sets `held` once
    the row is written."""
    with transaction.atomic():
        RetrievalObservation.objects.create(
            dimension=Dimension.objects.get(name="evidence-test"),
            execution_id=execution_id,
            capability="search",
            status="ok",
            document_sha256="0",
        )
        held.set()
        release.wait(timeout=60)
        transaction.set_rollback(True)


_CACHE: dict[str, dict] = {}


def _cached(name: str) -> dict:
    if name not in _CACHE:
        _CACHE[name] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return _CACHE[name]


@pytest.fixture
def dimension(db) -> Dimension:
    dimension = Dimension.objects.create(
        name="evidence-test",
        namespace="urn:test:evidence",
        policy_package_ref="urn:policy:test@1",
        disposition_policy_ref="urn:policy:retention@1",
        disclosure_policy_ref="urn:policy:disclosure@1",
        safety_policy_ref="urn:policy:safety@1",
        owner_ref="role:grounding-curator",
    )
    # What creating it through governance records: its staff's internal decisions
    # (without the audit event, which the import tests count).
    record_internal_decisions(dimension)
    return dimension


def _user(username: str, dimension: Dimension | None, role: str | None):
    user = get_user_model().objects.create_user(username=username, password="x-unused-x")
    if role is not None:
        DimensionMembership.objects.create(user=user, dimension=dimension, role=role)
    return user


@pytest.fixture
def curator(dimension):
    return _user("curator", dimension, "curator")


@pytest.fixture
def reviewer(dimension):
    return _user("reviewer", dimension, "reviewer")


@pytest.fixture
def outsider(db):
    return _user("outsider", None, None)


def client_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {factories.token_for(user)}")
    return client


@pytest.fixture
def search_doc() -> dict:
    return load("search")


@pytest.fixture
def extract_doc() -> dict:
    return load("extract")


@pytest.fixture
def cache_doc() -> dict:
    return load("cache_hit")


@pytest.fixture
def failing_trigger(db):
    """A database trigger that aborts the insert of observation obs-3's passage."""
    vendor = connection.vendor
    with connection.cursor() as cursor:
        if vendor == "sqlite":
            cursor.execute(
                "CREATE TRIGGER fail_obs3 BEFORE INSERT ON evidence_passage "
                "WHEN NEW.observation_id = 'obs-3' "
                "BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
            )
        elif vendor == "postgresql":
            cursor.execute(
                "CREATE FUNCTION fail_obs3() RETURNS trigger AS $$ BEGIN "
                "IF NEW.observation_id = 'obs-3' THEN RAISE EXCEPTION 'injected failure'; "
                "END IF; RETURN NEW; END $$ LANGUAGE plpgsql"
            )
            cursor.execute(
                "CREATE TRIGGER fail_obs3 BEFORE INSERT ON evidence_passage "
                "FOR EACH ROW EXECUTE FUNCTION fail_obs3()"
            )
        else:
            pytest.skip(f"no trigger recipe for {vendor}")
    yield
    with connection.cursor() as cursor:
        if vendor == "sqlite":
            cursor.execute("DROP TRIGGER IF EXISTS fail_obs3")
        else:
            cursor.execute("DROP TRIGGER IF EXISTS fail_obs3 ON evidence_passage")
            cursor.execute("DROP FUNCTION IF EXISTS fail_obs3()")


def wsp_document(
    execution_id: str,
    texts: list[str],
    *,
    request_id: str | None = None,
    host: str = "batch.example.org",
) -> dict:
    """The search fixture with one observation per text: observation i ("obs-i")
    carries texts[i-1] and comes from source https://<host>/i. Results and policy
    actions, which name fixture observations, are left out."""
    document = load("search")
    template = document["observations"][0]
    document["execution_id"] = execution_id
    document["request_id"] = request_id or f"req-{execution_id}"
    document["observations"] = []
    for i, text in enumerate(texts, start=1):
        observation = copy.deepcopy(template)
        observation["observation_id"] = f"obs-{i}"
        observation["provider_result_index"] = i
        observation["provider_rank"] = i
        url = f"https://{host}/{i}"
        observation["url"] = {"observed": f"{url}?utm=1", "canonical": url}
        observation["snippet"] = text
        document["observations"].append(observation)
    document["results"] = []
    document["policy_actions"] = []
    return document


def broken(document: dict) -> dict:
    """`document` with its first observation naming an unknown provider attempt."""
    document["observations"][0]["provider_attempt_id"] = "att-9"
    return document
