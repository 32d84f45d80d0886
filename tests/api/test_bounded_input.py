"""Issue 13, input half: bad input is a 4xx problem with offenders, never a 500.

Bodies nested deeper than GROUNDING_MAX_JSON_DEPTH, values larger than their limits,
strings longer than their columns, wrong types, duplicate master_refs, NUL or dot
segments in path refs and model-validation errors of the policy endpoints; each
refused request leaves an audit event with its code.
"""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from grounding.models import EvidenceSet, GroundingLink
from policies.models import AuditEvent, DisclosureDecision, Profile
from tests import factories
from tests.api.helpers import (
    Nested,
    client_for,
    if_match,
    pointers,
    problem,
    raw_json,
    register_body,
    url,
)

DEPTH = 64


_nested = Nested
_encode = raw_json


def _post(client, path: str, body, **extra):
    return client.post(path, _encode(body), content_type="application/json", **extra)


def _refused(action: str) -> list[str]:
    return list(
        AuditEvent.objects.filter(action=action, outcome="refused").values_list("code", flat=True)
    )


# -- depth -------------------------------------------------------------------------


@pytest.mark.parametrize("levels", [200, 1_000, 100_000])
def test_a_body_nested_too_deep_is_400_body_too_deep_on_register(world, levels):
    body = register_body(world)
    body["statement"]["claim_scope"] = {"proposition": _nested(levels)}
    response = _post(client_for(world.curator), "/api/v1/groundings/", body)
    payload = problem(response, 400, "body_too_deep")
    [offender] = payload["offenders"]
    assert offender["code"] == "max_depth"
    assert f"{DEPTH} levels" in offender["detail"]
    if levels == 200:  # parsed, then measured: the pointer names the first level too deep
        assert offender["pointer"] == "/statement/claim_scope/proposition" + "/0" * 61
    else:  # deeper than the decoder's own stack: the whole body is the offender
        assert offender["pointer"] in ("", "/statement/claim_scope/proposition" + "/0" * 61)
    assert GroundingLink.objects.count() == 0
    assert _refused("register") == ["body_too_deep"]


def test_a_body_at_the_depth_limit_reaches_validation(world):
    body = register_body(world)
    body["statement"]["claim_scope"] = {"proposition": _nested(DEPTH - 3)}  # 64 levels
    response = _post(client_for(world.curator), "/api/v1/groundings/", body)
    payload = problem(response, 400, "validation_error")
    assert payload["offenders"][0]["pointer"].startswith("/statement/claim_scope")


def test_deep_bodies_are_refused_on_bulk_patch_and_wsp_import(world, link):
    client = client_for(world.curator)
    deep = {"items": [_nested(1_000)]}
    problem(_post(client, "/api/v1/groundings/bulk/", deep), 400, "body_too_deep")
    response = client.patch(
        url(link.grounding_id),
        _encode({"revision_reason": "x", "identity_decision": _nested(1_000)}),
        content_type="application/json",
        **if_match(1),
    )
    problem(response, 400, "body_too_deep")
    response = _post(client, "/api/v1/evidence/wsp-imports/", {"results": _nested(1_000)})
    problem(response, 400, "body_too_deep")
    assert _refused("register_bulk") == ["body_too_deep"]
    assert _refused("revise") == ["body_too_deep"]
    assert _refused("wsp_import") == ["body_too_deep"]
    link.refresh_from_db()
    assert link.revision == 1


def test_the_depth_limit_is_a_setting(world, settings):
    settings.GROUNDING_MAX_JSON_DEPTH = 2  # the register body has three levels
    response = _post(client_for(world.curator), "/api/v1/groundings/", register_body(world))
    payload = problem(response, 400, "body_too_deep")
    assert "2 levels" in payload["offenders"][0]["detail"]


# -- sizes -------------------------------------------------------------------------

SEVEN_MIB = "x" * (7 * 1024 * 1024)


@pytest.mark.parametrize(
    ("group", "member", "key"),
    [
        ("statement", "claim_scope", "proposition"),
        ("anchor", "source_selector", "exact"),
        ("support", "support_scope", "covers"),
    ],
)
def test_a_seven_mib_string_in_a_value_is_refused_naming_the_limit(world, group, member, key):
    body = register_body(world)
    body[group][member][key] = SEVEN_MIB
    response = _post(client_for(world.curator), "/api/v1/groundings/", body)
    payload = problem(response, 400, "validation_error")
    assert payload["offenders"] == [
        {
            "pointer": f"/{group}/{member}/{key}",
            "code": "max_length",
            "detail": "longer than 16384 characters",
        }
    ]
    assert GroundingLink.objects.count() == 0


def test_a_structured_value_larger_than_its_limit_is_refused(world):
    body = register_body(world)
    body["statement"]["claim_scope"] = {f"k{i}": "y" * 10_000 for i in range(8)}  # > 64 KiB
    response = _post(client_for(world.curator), "/api/v1/groundings/", body)
    payload = problem(response, 400, "validation_error")
    assert payload["offenders"] == [
        {
            "pointer": "/statement/claim_scope",
            "code": "value.too_large",
            "detail": "larger than 65536 bytes as JSON",
        }
    ]


def test_the_size_limits_are_settings(world, settings):
    settings.GROUNDING_MAX_STRING_LENGTH = 10
    body = register_body(world, owner_ref="o" * 11)
    payload = problem(
        _post(client_for(world.curator), "/api/v1/groundings/", body), 400, "validation_error"
    )
    assert "/owner_ref" in pointers(payload)
    assert "/statement/claim_scope/proposition" in pointers(payload)
    assert {o["code"] for o in payload["offenders"]} == {"max_length"}
    assert all(o["detail"].endswith("longer than 10 characters") for o in payload["offenders"])


# -- type, length, uniqueness --------------------------------------------------------


@pytest.mark.parametrize(
    ("member", "value", "code"),
    [
        ("owner_ref", "o" * 256, "max_length"),
        ("master_ref", "m" * 513, "max_length"),
        ("master_ref", {"a": 1}, "type"),
        ("identity_decision", ["same", "as"], "type"),
        ("identity_decision", {"a": 1}, "type"),
    ],
)
def test_wrong_types_and_over_long_refs_are_400_with_a_pointer(world, member, value, code):
    body = register_body(world, **{member: value})
    response = _post(client_for(world.curator), "/api/v1/groundings/", body)
    payload = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in payload["offenders"]] == [(f"/{member}", code)]
    assert GroundingLink.objects.count() == 0


def test_patch_with_an_over_long_owner_ref_or_change_ref_is_400(world, link):
    response = client_for(world.curator).patch(
        url(link.grounding_id),
        {"revision_reason": "r", "owner_ref": "o" * 256, "change_ref": "c" * 513},
        format="json",
        **if_match(1),
    )
    payload = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in payload["offenders"]] == [
        ("/change_ref", "max_length"),
        ("/owner_ref", "max_length"),
    ]


def test_a_duplicate_master_ref_is_409_master_ref_conflict(world):
    client = client_for(world.curator)
    first = _post(client, "/api/v1/groundings/", register_body(world, master_ref="urn:m:1"))
    assert first.status_code == 201
    again = _post(client, "/api/v1/groundings/", register_body(world, master_ref="urn:m:1"))
    payload = problem(again, 409, "master_ref_conflict")
    assert [(o["pointer"], o["code"]) for o in payload["offenders"]] == [("/master_ref", "unique")]
    assert GroundingLink.objects.count() == 1
    assert _refused("register") == ["master_ref_conflict"]


def test_a_master_ref_twice_in_one_bulk_or_already_recorded_is_409(world):
    client = client_for(world.curator)
    twice = {"items": [register_body(world, master_ref="urn:m:2") for _ in range(2)]}
    payload = problem(_post(client, "/api/v1/groundings/bulk/", twice), 409, "master_ref_conflict")
    assert [(o["pointer"], o["code"]) for o in payload["offenders"]] == [
        ("/items/1/master_ref", "duplicate")
    ]
    assert GroundingLink.objects.count() == 0
    factories.register_link(
        world.curator, world.dimension, world.profile, world.passage, master_ref="urn:m:3"
    )
    taken = {"items": [register_body(world), register_body(world, master_ref="urn:m:3")]}
    payload = problem(_post(client, "/api/v1/groundings/bulk/", taken), 409, "master_ref_conflict")
    assert pointers(payload) == ["/items/1/master_ref"]
    assert GroundingLink.objects.count() == 1
    assert _refused("register_bulk") == ["master_ref_conflict", "master_ref_conflict"]


def test_an_integrity_error_the_checks_missed_becomes_the_matching_409(world, link):
    """A real unique violation from the database (as a concurrent writer would cause)."""
    from common.web.errors import database_refusal

    link.master_ref = "urn:m:taken"
    link.save()
    clash = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    clash.master_ref = "urn:m:taken"
    with pytest.raises(IntegrityError) as caught, transaction.atomic():
        clash.save()
    status, body = database_refusal(caught.value)
    assert (status, body["code"], body["offenders"][0]["pointer"]) == (
        409,
        "master_ref_conflict",
        "/master_ref",
    )


# -- refs in paths -----------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/evidence-sets/a%00b/",
        "/api/v1/evidence-sets/%00/",
        "/api/v1/evidence-sets/a/../b/",
        "/api/v1/disclosure-decisions/%00/",
        "/api/v1/disclosure-decisions/a%00b/",
    ],
)
def test_nul_or_dot_segments_in_a_path_ref_name_nothing(world, path):
    problem(client_for(world.access_steward).get(path), 404, "not_found")


def test_adding_a_member_to_a_set_whose_ref_holds_nul_is_400(world, link):
    response = client_for(world.curator).post(
        "/api/v1/evidence-sets/a%00b/members/",
        {"grounding_id": str(link.grounding_id), "membership_role": "premise"},
        format="json",
        **if_match(1),
    )
    payload = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in payload["offenders"]] == [
        ("/evidence_set_ref", "unstorable_character")
    ]


@pytest.mark.parametrize(
    ("ref", "code"),
    [
        ("a/../b", "dot_segment"),
        ("./a", "dot_segment"),
        ("a/..", "dot_segment"),
        ("a\tb", "control_character"),
        ("a\x7fb", "control_character"),
    ],
)
def test_set_refs_with_dot_segments_or_control_characters_are_refused(world, link, ref, code):
    body = {"evidence_set_ref": ref, "dimension": world.dimension.name}
    response = _post(client_for(world.curator), "/api/v1/evidence-sets/", body)
    payload = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in payload["offenders"]] == [
        ("/evidence_set_ref", code)
    ]
    assert EvidenceSet.objects.count() == 0
    assert _refused("create_evidence_set") == ["validation_error"]


def _decision(world, **overrides):
    return {
        "decision_ref": "urn:decision:1",
        "dimension": world.dimension.name,
        "recipient_scope": "role:reviewer",
        "purpose": "review",
        "fields": ["support"],
        **overrides,
    }


def test_decision_refs_with_dot_segments_are_refused_and_audited(world):
    before = DisclosureDecision.objects.count()
    response = _post(
        client_for(world.access_steward),
        "/api/v1/disclosure-decisions/",
        _decision(world, decision_ref="urn:d/../other"),
    )
    payload = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in payload["offenders"]] == [
        ("/decision_ref", "dot_segment")
    ]
    assert DisclosureDecision.objects.count() == before
    assert _refused("record_disclosure_decision") == ["validation_error"]


# -- policy endpoints --------------------------------------------------------------


def _profile_body(**overrides):
    return {
        "name": "fresh",
        "version": "1.0.0",
        "support_vocabulary": ["quotation"],
        "selector_profiles": ["nfc-codepoint-halfopen@1"],
        "mapping_profile_ref": "urn:map:1",
        "endpoint_role_map": {"source": "passage"},
        **overrides,
    }


def test_a_model_validation_error_on_post_profiles_is_400_with_a_pointer(world):
    # The serializer admits an empty map; the model does not (blank): a model error.
    response = _post(
        client_for(world.steward),
        "/api/v1/profiles/",
        _profile_body(endpoint_role_map={}, dimension=world.dimension.name),
    )
    payload = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in payload["offenders"]] == [
        ("/endpoint_role_map", "blank")
    ]
    assert not Profile.objects.filter(name="fresh").exists()
    assert _refused("create_profile") == ["validation_error"]


def test_profile_field_schemas_are_bounded(world):
    huge = {"claim_scope": {"description": "d" * 70_000}}
    response = _post(
        client_for(world.steward), "/api/v1/profiles/", _profile_body(field_schemas=huge)
    )
    payload = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in payload["offenders"]] == [
        ("/field_schemas", "value.too_large")
    ]


# -- audit of refusals no service saw ------------------------------------------------


def test_refused_disclosure_decision_posts_are_audited(world):
    client = client_for(world.access_steward)
    problem(_post(client, "/api/v1/disclosure-decisions/", {"fields": []}), 400, "validation_error")
    outsider = client_for(world.curator)
    problem(
        _post(outsider, "/api/v1/disclosure-decisions/", _decision(world)), 403, "role_required"
    )
    events = AuditEvent.objects.filter(action="record_disclosure_decision", outcome="refused")
    assert sorted(events.values_list("code", flat=True)) == ["role_required", "validation_error"]
    assert {e.dimension_ref for e in events} == {"", world.dimension.name}


def test_parse_errors_and_413s_are_audited(world, settings):
    client = client_for(world.curator)
    response = client.post("/api/v1/groundings/", "{not json", content_type="application/json")
    problem(response, 400, "parse_error")
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    response = _post(client, "/api/v1/groundings/bulk/", {"items": ["x" * 200]})
    problem(response, 413, "payload_too_large")
    assert _refused("register") == ["parse_error"]
    assert _refused("register_bulk") == ["payload_too_large"]


def test_a_refused_projection_query_is_audited(world, link):
    response = client_for(world.projection_agent).get(url(link.grounding_id, "projection/"))
    problem(response, 400, "validation_error")
    event = AuditEvent.objects.get(action="project", outcome="refused")
    assert (event.code, event.grounding_id, event.dimension_ref) == (
        "validation_error",
        link.grounding_id,
        world.dimension.name,
    )


def test_a_refusal_a_service_audited_is_audited_once(world):
    body = register_body(world, owner_ref="")
    problem(_post(client_for(world.curator), "/api/v1/groundings/", body), 400, "validation_error")
    assert _refused("register") == ["validation_error"]


def test_unauthenticated_requests_write_no_audit_rows(world):
    problem(_post(client_for(None), "/api/v1/groundings/", {}), 401, "not_authenticated")
    assert not AuditEvent.objects.filter(outcome="refused").exists()


def test_a_number_where_a_policy_endpoint_wants_a_string_is_refused(world):
    body = {
        "name": "numbers",
        "namespace": "urn:grounding:numbers",
        "policy_package_ref": "urn:p@1",
        "disposition_policy_ref": "urn:d@1",
        "disclosure_policy_ref": "urn:c@1",
        "safety_policy_ref": 7,
        "owner_ref": "role:curator",
    }
    response = _post(
        client_for(factories.UserFactory(is_superuser=True)), "/api/v1/dimensions/", body
    )
    payload = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in payload["offenders"]] == [
        ("/safety_policy_ref", "type")
    ]
    assert _refused("create_dimension") == ["validation_error"]


def test_a_crash_on_an_operation_endpoint_is_answered_500_and_audited(world):
    """The handler's last branch: no input reaches it any more, so it is driven with a
    real request and an exception a bug would raise."""
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory, force_authenticate

    from common.web.errors import problem_exception_handler

    raw = APIRequestFactory().post("/api/v1/groundings/bulk/", {"items": []}, format="json")
    force_authenticate(raw, user=world.curator)
    request = Request(raw)
    request._user = world.curator  # what authentication leaves on a DRF request
    response = problem_exception_handler(RuntimeError("a bug"), {"request": request})
    assert (response.status_code, response.data["code"]) == (500, "internal_error")
    event = AuditEvent.objects.get(action="register_bulk", outcome="refused")
    assert (event.code, event.actor_ref) == ("internal_error", f"user:{world.curator.username}")
