"""Property: whatever body a client sends to an operation, the answer is never a 5xx,
and every refusal is problem+json with a code and offenders (non-empty for a 400).

Bodies start from a valid one per operation and hypothesis mutates them: members
replaced by hostile values (wrong types, huge or unstorable strings, dot segments,
deep nesting near the parser's limit), members removed or added, or the whole body
replaced. Derandomized and bounded (EXAMPLES per operation), so CI is reproducible.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests import factories
from tests.api.helpers import PROBLEM, Nested, client_for, raw_json, register_body, url
from tests.citations.helpers import external, openai_body

EXAMPLES = 30
FIXTURES = Path(__file__).resolve().parent.parent

# Values a hostile client sends: wrong types, limits' edges, unstorable text.
HOSTILE_STRINGS = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "a\x00b",
        "\ud800",
        "a/../b",
        "./",
        "\t\n",
        "x" * 256,
        "x" * 513,
        "x" * 16_385,
        "é" * 9_000,
        "2026-13-45T99:99:99Z",
        "urn:x",
        "quotation",
        "supporting",
        "builtin",
    ]
)
# Members an operation may know, added where the valid body lacks them (a repeated
# master_ref, a master_ref or identity_decision of the wrong type, …).
MEMBERS = st.sampled_from(
    ["master_ref", "identity_decision", "owner_ref", "expected_revision", "related_link_refs",
     "disclosure", "time", "decision_ref", "valid_from", "grounding_ids", "members"]
)  # fmt: skip
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    HOSTILE_STRINGS,
)
VALUES = st.one_of(
    st.recursive(
        LEAVES,
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(st.text(max_size=6), children, max_size=3)
        ),
        max_leaves=8,
    ),
    # Around the parser's depth limit (64): some pass it, some are refused by it; and
    # far beyond it (spliced in as raw JSON: json.dumps could not encode them).
    st.integers(min_value=60, max_value=70).map(lambda n: json.loads("[" * n + "]" * n)),
    st.sampled_from([200, 1_000, 5_000]).map(Nested),
    # A large value built of strings under the string limit.
    st.just({f"k{i}": "y" * 9_000 for i in range(8)}),
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every member path of a JSON value (lists by index), the root excluded."""
    found: list[tuple] = []
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return found
    for key, child in items:
        found.append((*prefix, key))
        found += _paths(child, (*prefix, key))
    return found


def _parent(body: Any, path: tuple) -> Any:
    for key in path[:-1]:
        body = body[key]
    return body


def _value(draw) -> Any:
    # A copy: a drawn value must never be shared (st.just) or become its own member.
    return copy.deepcopy(draw(VALUES))


@st.composite
def mutated(draw, base: dict) -> Any:
    if draw(st.integers(min_value=0, max_value=19)) == 0:
        return _value(draw)  # the whole body replaced
    body = copy.deepcopy(base)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _paths(body)
        kind = draw(st.sampled_from(["replace", "replace", "replace", "remove", "add"]))
        if kind == "add" or not paths:
            body[draw(st.one_of(MEMBERS, st.text(min_size=1, max_size=8)))] = _value(draw)
            continue
        path = draw(st.sampled_from(paths))
        parent = _parent(body, path)
        if kind == "remove" and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = _value(draw)
    return body


@dataclass
class Operation:
    name: str
    method: str
    user: str  # World attribute
    path: Callable[[Any, Any], str]  # (world, fresh link) -> path
    body: Callable[[Any, Any], dict]  # (world, fresh link) -> valid body
    needs_link: bool = False
    if_match: bool = False


def _load(relative: str) -> dict:
    return json.loads((FIXTURES / relative).read_text("utf-8"))


def _citations_body(world, _link) -> dict:
    return openai_body(
        world,
        answer_revision_ref="urn:answer:77@1",
        passages={
            "https://example.org/bridge?utm_source=openai": external("https://example.org/bridge")
        },
    )


def _set_body(world, link) -> dict:
    return {
        "evidence_set_ref": "urn:set:fuzz/1",
        "dimension": world.dimension.name,
        "members": [{"grounding_id": str(link.grounding_id), "membership_role": "premise"}],
        "combination_rule_ref": "urn:rule:all-premises",
        "declared_missing_members": ["urn:premise:1"],
    }


OPERATIONS = [
    Operation("register", "post", "curator", lambda w, _: "/api/v1/groundings/",
              lambda w, _: register_body(w)),
    Operation("bulk", "post", "curator", lambda w, _: "/api/v1/groundings/bulk/",
              lambda w, _: {"items": [register_body(w), register_body(w, external=True)]}),
    Operation("revise", "patch", "curator", lambda w, link: url(link.grounding_id),
              lambda w, _: {"revision_reason": "fuzz", "owner_ref": "role:x",
                            "identity_decision": "same", "support": {
                                "support_kind": "paraphrase",
                                "support_scope": {"covers": "year"}}},
              needs_link=True, if_match=True),
    Operation("assessments", "post", "reviewer",
              lambda w, link: url(link.grounding_id, "assessments/"),
              lambda w, _: factories.assessment_body(1), needs_link=True, if_match=True),
    Operation("anchor-observations", "post", "curator",
              lambda w, link: url(link.grounding_id, "anchor-observations/"),
              lambda w, _: {"resolver": "builtin"}, needs_link=True, if_match=True),
    Operation("withdrawal", "post", "curator",
              lambda w, link: url(link.grounding_id, "withdrawal/"),
              lambda w, _: {"reason": "retracted", "authority_ref": "urn:policy:r@1",
                            "scope": "display"}, needs_link=True, if_match=True),
    Operation("disposal", "post", "access_steward",
              lambda w, link: url(link.grounding_id, "disposal/"),
              lambda w, _: {"receipt_ref": "urn:receipt:9", "policy_ref": "urn:policy:ret@1"},
              needs_link=True, if_match=True),
    Operation("evidence-sets", "post", "curator", lambda w, _: "/api/v1/evidence-sets/",
              _set_body, needs_link=True),
    Operation("disclosure-decisions", "post", "access_steward",
              lambda w, _: "/api/v1/disclosure-decisions/",
              lambda w, _: {"decision_ref": "urn:decision:fuzz", "dimension": w.dimension.name,
                            "recipient_scope": "role:reviewer", "purpose": "review",
                            "fields": ["support"], "grounding_ids": None}),
    Operation("dimensions", "post", "operator", lambda w, _: "/api/v1/dimensions/",
              lambda w, _: {"name": "fuzzroom", "namespace": "urn:grounding:fuzz",
                            "policy_package_ref": "urn:p@1", "disposition_policy_ref": "urn:d@1",
                            "disclosure_policy_ref": "urn:c@1", "safety_policy_ref": "urn:s@1",
                            "owner_ref": "role:curator"}),
    Operation("profiles", "post", "steward", lambda w, _: "/api/v1/profiles/",
              lambda w, _: {"dimension": w.dimension.name, "name": "fuzz", "version": "1.0.0",
                            "support_vocabulary": ["quotation"],
                            "selector_profiles": ["nfc-codepoint-halfopen@1"],
                            "field_schemas": {"claim_scope": {"type": "object"}},
                            "mapping_profile_ref": "urn:map:1",
                            "endpoint_role_map": {"source": "passage"}}),
    Operation("wsp-import", "post", "curator", lambda w, _: "/api/v1/evidence/wsp-imports/",
              lambda w, _: _load("evidence/fixtures/search.json")),
    Operation("from-citations", "post", "curator",
              lambda w, _: "/api/v1/groundings/from-citations/", _citations_body),
]  # fmt: skip


def _check(response, *, where: str) -> None:
    assert response.status_code < 500, (where, response.status_code, response.content[:300])
    if response.status_code < 400:
        return
    assert response["Content-Type"].startswith(PROBLEM), (where, response["Content-Type"])
    problem = response.json()
    assert isinstance(problem["code"], str) and problem["code"], where
    assert problem["status"] == response.status_code, where
    assert isinstance(problem["offenders"], list), where
    for offender in problem["offenders"]:
        assert set(offender) == {"pointer", "code", "detail"}, (where, offender)
        assert offender["pointer"] == "" or offender["pointer"].startswith("/"), (where, offender)
    if response.status_code == 400 and problem["code"] in ("validation_error", "body_too_deep"):
        assert problem["offenders"], (where, problem)


@pytest.mark.parametrize("operation", OPERATIONS, ids=[o.name for o in OPERATIONS])
def test_no_body_reaches_a_server_error(world, operation, django_db_blocker):
    # The passage the citations fixture's documents would name; any passage will do.
    # Creating a Dimension is an operator's act (API.md "Tenancy"): a superuser sends it.
    user = (
        factories.UserFactory(is_superuser=True, is_staff=True)
        if operation.user == "operator"
        else getattr(world, operation.user)
    )
    client = client_for(user)
    shared = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    base = operation.body(world, shared)
    sent = 0

    @given(body=mutated(base))
    @hypothesis_settings(
        max_examples=EXAMPLES,
        derandomize=True,  # the same examples every run
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def run(body) -> None:
        nonlocal sent
        link = (
            factories.register_link(world.curator, world.dimension, world.profile, world.passage)
            if operation.needs_link
            else shared
        )
        headers = {"HTTP_IF_MATCH": f'"{link.revision}"'} if operation.if_match else {}
        raw = raw_json(body)  # ASCII escapes: lone surrogates travel as \ud800
        response = getattr(client, operation.method)(
            operation.path(world, link), raw, content_type="application/json", **headers
        )
        sent += 1
        statuses[response.status_code] += 1
        _check(response, where=f"{operation.name}: {raw[:200]}")

    statuses: Counter = Counter()
    run()
    print(f"fuzz {operation.name}: {sent} requests, statuses {dict(sorted(statuses.items()))}")
    assert sent >= EXAMPLES // 2
