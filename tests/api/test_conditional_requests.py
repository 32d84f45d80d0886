"""If-Match / expected_revision on every mutating endpoint (grounding.api.conditional).

Decisions under test (documented in grounding/api/conditional.py):
missing ⇒ 428; stale ⇒ 412 with current_revision; weak W/"n" ⇒ 412 (strong
comparison never matches a weak tag); `*` alone ⇒ 428 (it names no revision);
a list of tags or anything but one quoted integer ⇒ 400 invalid_if_match; header
and body disagreeing ⇒ 400 expected_revision_conflict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from grounding import services
from grounding.models import EvidenceSet, GroundingLink
from tests import factories
from tests.api.helpers import client_for, pointers, problem


@dataclass
class Target:
    client: Any
    method: str
    path: str
    body: Callable[[int], dict]
    revision: Callable[[], int]
    advance: Callable[[], None]

    def send(self, header: str | None = None, body_revision: Any = None, **extra) -> Any:
        body = self.body(self.revision())
        if body_revision is not None:
            body["expected_revision"] = body_revision
        headers = {"HTTP_IF_MATCH": header} if header is not None else {}
        return getattr(self.client, self.method)(self.path, body, format="json", **headers)


def _link_target(world, suffix: str, user: str, method: str, body: Callable[[int], dict]):
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)

    def revision() -> int:
        return GroundingLink.objects.get(pk=link.pk).revision

    def advance() -> None:
        services.revise(
            actor=world.curator,
            grounding_id=link.grounding_id,
            expected_revision=revision(),
            changes={"owner_ref": f"role:owner-{revision()}", "revision_reason": "advance"},
        )

    return Target(
        client_for(getattr(world, user)),
        method,
        f"/api/v1/groundings/{link.grounding_id}/{suffix}",
        body,
        revision,
        advance,
    )


def _set_target(world, remove: bool):
    links = [
        factories.register_link(world.curator, world.dimension, world.profile) for _ in range(3)
    ]
    services.create_evidence_set(
        actor=world.curator,
        values={
            "evidence_set_ref": "urn:set:cond",
            "dimension": world.dimension.name,
            "members": [{"grounding_id": str(links[0].grounding_id), "membership_role": "premise"}],
        },
    )

    def revision() -> int:
        return EvidenceSet.objects.get(evidence_set_ref="urn:set:cond").revision

    def advance() -> None:
        services.change_evidence_set(
            actor=world.curator,
            evidence_set_ref="urn:set:cond",
            expected_revision=revision(),
            add=[{"grounding_id": str(links[1].grounding_id), "membership_role": "context"}],
        )

    if remove:
        path = f"/api/v1/evidence-sets/urn:set:cond/members/{links[0].grounding_id}/"
        body: Callable[[int], dict] = lambda _: {}  # noqa: E731
        method = "delete"
    else:
        path = "/api/v1/evidence-sets/urn:set:cond/members/"
        body = lambda _: {"grounding_id": str(links[2].grounding_id), "membership_role": "premise"}  # noqa: E731
        method = "post"
    return Target(client_for(world.curator), method, path, body, revision, advance)


TARGETS: dict[str, Callable[[Any], Target]] = {
    "revise": lambda w: _link_target(
        w, "", "curator", "patch",
        lambda rev: {"owner_ref": f"role:new-{rev}", "revision_reason": "r"},
    ),
    "assessment": lambda w: _link_target(
        w, "assessments/", "reviewer", "post", lambda rev: factories.assessment_body(rev)
    ),
    "anchor-observation": lambda w: _link_target(
        w, "anchor-observations/", "curator", "post", lambda rev: {"resolver": "builtin"}
    ),
    "withdrawal": lambda w: _link_target(
        w, "withdrawal/", "curator", "post",
        lambda rev: {"reason": "r", "authority_ref": "urn:policy:r"},
    ),
    "disposal": lambda w: _link_target(
        w, "disposal/", "access_steward", "post",
        lambda rev: {"receipt_ref": "urn:receipt:1", "policy_ref": "urn:policy:p"},
    ),
    "set-member-add": lambda w: _set_target(w, remove=False),
    "set-member-remove": lambda w: _set_target(w, remove=True),
}  # fmt: skip


@pytest.fixture(params=sorted(TARGETS))
def target(request, world) -> Target:
    return TARGETS[request.param](world)


def _succeeded(target: Target, response, before: int) -> None:
    assert response.status_code in (200, 201), response.content
    assert response["ETag"] == f'"{before + 1}"'
    assert target.revision() == before + 1


def _refused(target: Target, response, status: int, code: str, before: int) -> dict:
    body = problem(response, status, code)
    assert target.revision() == before
    return body


def test_a_mutation_without_if_match_or_expected_revision_is_428(target):
    _refused(target, target.send(), 428, "precondition_required", 1)


def test_a_mutation_with_the_current_revision_applies(target):
    _succeeded(target, target.send('"1"'), 1)


def test_a_mutation_with_a_stale_revision_is_412_with_the_current_revision(target):
    target.advance()
    body = _refused(target, target.send('"1"'), 412, "revision_mismatch", 2)
    assert body["current_revision"] == 2
    assert "ETag" not in target.send('"1"')


@pytest.mark.parametrize("header", ["1", '"abc"'])
def test_a_malformed_if_match_is_400_invalid_if_match(target, header):
    _refused(target, target.send(header), 400, "invalid_if_match", 1)


@pytest.mark.parametrize(
    "header", ['"01"', '"1', '""', '"-1"', '"1234567890"', "W/1", '"1" "2"', "W/"]
)
def test_every_malformed_if_match_shape_is_400_invalid_if_match(world, header):
    target = TARGETS["revise"](world)
    _refused(target, target.send(header), 400, "invalid_if_match", 1)


def test_a_weak_if_match_never_matches_and_is_412(target):
    body = _refused(target, target.send('W/"1"'), 412, "revision_mismatch", 1)
    assert body["current_revision"] == 1


def test_if_match_star_alone_names_no_revision_and_is_428(target):
    _refused(target, target.send("*"), 428, "precondition_required", 1)


def test_if_match_star_with_a_body_revision_uses_the_body(target):
    _succeeded(target, target.send("*", body_revision=1), 1)


def test_a_list_of_entity_tags_is_400_invalid_if_match(target):
    _refused(target, target.send('"1", "2"'), 400, "invalid_if_match", 1)


def test_header_and_body_disagreeing_is_400_expected_revision_conflict(target):
    _refused(target, target.send('"1"', body_revision=6), 400, "expected_revision_conflict", 1)


def test_header_and_body_agreeing_applies(target):
    _succeeded(target, target.send('"1"', body_revision=1), 1)


def test_expected_revision_in_the_body_alone_applies(target):
    _succeeded(target, target.send(body_revision=1), 1)


def test_a_stale_expected_revision_in_the_body_is_412(target):
    target.advance()
    body = _refused(target, target.send(body_revision=1), 412, "revision_mismatch", 2)
    assert body["current_revision"] == 2


def test_a_malformed_body_expected_revision_is_a_validation_error(target):
    body = _refused(target, target.send(body_revision="1"), 400, "validation_error", 1)
    assert pointers(body) == ["/expected_revision"]


@pytest.mark.parametrize("value", [True, 0, -3, 1.5, 10**12, None, [1]])
def test_every_malformed_body_expected_revision_is_a_validation_error(world, value):
    target = TARGETS["revise"](world)
    response = target.send(**({"body_revision": value} if value is not None else {}))
    if value is None:
        # {"expected_revision": null} is sent explicitly below; None means "absent".
        body = target.body(1) | {"expected_revision": None}
        response = target.client.patch(target.path, body, format="json")
    body = _refused(target, response, 400, "validation_error", 1)
    assert pointers(body) == ["/expected_revision"]


def test_if_match_tolerates_whitespace_around_the_tag(target):
    _succeeded(target, target.send('  "1"  '), 1)


def test_a_refused_precondition_is_audited_like_any_refusal(world):
    from policies.models import AuditEvent

    target = TARGETS["revise"](world)
    target.send()
    target.send("*")
    target.send('"x"')
    target.send('"1"', body_revision=3)
    events = AuditEvent.objects.filter(action="revise", outcome="refused").order_by("occurred_at")
    assert [(e.code, e.actor_ref, e.dimension_ref) for e in events] == [
        ("precondition_required", f"user:{world.curator.username}", world.dimension.name),
        ("precondition_required", f"user:{world.curator.username}", world.dimension.name),
        ("invalid_if_match", f"user:{world.curator.username}", world.dimension.name),
        ("expected_revision_conflict", f"user:{world.curator.username}", world.dimension.name),
    ]
    assert {str(e.grounding_id) for e in events} == {target.path.split("/")[4]}
