"""Every member of every declared body is checked: the compiler refuses, at start-up,
a field kind it has no check for, and a list's items are checked one by one (#26)."""

from __future__ import annotations

import pytest
from rest_framework import serializers

from grounding import bodies
from grounding.services import inputs
from policies.models import AuditEvent
from tests import factories
from tests.api.helpers import client_for, problem

SETS = "/api/v1/evidence-sets/"


def _members(body: inputs.Body) -> set[str]:
    return set(body.checks) | set(body.maps)


def test_every_declared_body_compiles_with_a_check_for_every_member():
    declared = inputs.declared_bodies()
    assert {cls.__name__ for cls in declared} == set(inputs.COMPILED)
    # 25: the passage group's and the anchor observation's described shapes (by id,
    # external; builtin, supplied) among them, and a citation's passage or PDF
    # document (from-citations' `passages`).
    assert len(declared) == 25
    for cls in declared:
        compiled = inputs.compile_body(cls.__name__, cls)
        expected = {
            key
            for key, f in cls().get_fields().items()
            if not isinstance(f, bodies.ExpectedRevision)
        }
        assert _members(compiled) == expected, cls.__name__
        assert _members(inputs.COMPILED[cls.__name__]) == expected


@pytest.mark.parametrize(
    "declared",
    [
        serializers.EmailField(),
        serializers.FloatField(),
        serializers.DecimalField(max_digits=4, decimal_places=2),
        serializers.MultipleChoiceField(choices=["a"]),
        serializers.ListField(child=serializers.URLField()),
        serializers.DictField(child=serializers.FloatField()),
        serializers.FileField(),
    ],
    ids=lambda f: type(f).__name__,
)
def test_the_compiler_refuses_a_field_kind_it_cannot_check(declared):
    body = type("OddSerializer", (serializers.Serializer,), {"odd": declared})
    with pytest.raises(TypeError, match=r"OddSerializer\.odd"):
        inputs.compile_body("odd", body)


def test_a_list_of_strings_refuses_each_item_that_is_no_string():
    check = inputs.EVIDENCE_SET.checks["declared_missing_members"]
    offenders = check("declared_missing_members", ["urn:a", 1, {"a": 2}, None, " "], "/d", None)
    assert [(o.pointer, o.code) for o in offenders] == [
        ("/d/1", "type"),
        ("/d/2", "type"),
        ("/d/3", "type"),
        ("/d/4", "type"),
    ]
    assert check("declared_missing_members", "urn:a", "/d", None)[0].code == "type"


def test_a_list_of_groups_checks_each_items_members():
    offenders = inputs.validate_group(
        inputs.EVIDENCE_SET,
        {"members": [{"grounding_id": 7, "membership_role": "x", "extra": 1}, "no"]},
        pointer="",
        partial=True,
    )
    assert sorted((o.pointer, o.code) for o in offenders) == [
        ("/members/0/extra", "unknown_field"),
        ("/members/0/grounding_id", "type"),
        ("/members/0/membership_role", "enum"),
        ("/members/1", "type"),
    ]


def test_integers_maps_and_patterns_are_checked():
    observation = inputs.COMPILED["AnchorObservationSerializer"]
    offenders = inputs.validate_group(
        observation,
        {"match_count": True, "matches": [{"start": -1, "end": "2"}], "text_sha256": "A"},
        pointer="",
    )
    assert sorted((o.pointer, o.code) for o in offenders) == [
        ("/match_count", "type"),
        ("/matches/0/end", "type"),
        ("/matches/0/start", "minimum"),
        ("/text_sha256", "pattern"),
    ]
    passages = inputs.FROM_CITATIONS.maps["passages"]
    assert [(o.pointer, o.code) for o in passages("passages", {"a/b": 3}, "/passages", None)] == [
        ("/passages/a~1b", "type")
    ]
    assert inputs.FROM_CITATIONS.maps["payload"]("payload", {"any": [1, None]}, "/p", None) == []


def test_an_evidence_set_with_items_that_are_no_strings_is_refused(world):
    links = [factories.register_link(world.curator, world.dimension, world.profile)]
    response = client_for(world.curator).post(
        SETS,
        {
            "evidence_set_ref": "urn:set:odd/1",
            "dimension": world.dimension.name,
            "members": [{"grounding_id": str(links[0].grounding_id), "membership_role": "premise"}],
            "declared_missing_members": [1, {"a": 2}, None],
        },
        format="json",
    )
    body = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [
        ("/declared_missing_members/0", "type"),
        ("/declared_missing_members/1", "type"),
        ("/declared_missing_members/2", "type"),
    ]
    assert list(
        AuditEvent.objects.filter(action="create_evidence_set").values_list("outcome", "code")
    ) == [("refused", "validation_error")]


def test_a_set_body_whose_lists_are_no_lists_names_each_once(world, link):
    body = {
        "evidence_set_ref": "urn:set:not-lists",
        "dimension": world.dimension.name,
        "members": "nope",
        "declared_missing_members": "nope",
    }
    response = client_for(world.curator).post("/api/v1/evidence-sets/", body, format="json")
    refused = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in refused["offenders"]] == [
        ("/members", "type"),
        ("/declared_missing_members", "type"),
    ]
