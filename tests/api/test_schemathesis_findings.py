"""Regressions of what `make schemathesis` found (issue 26 item 5), each reproduced as
the request it sent: a schema-valid request refused by a rule the schema did not
state, or a schema-violating one answered 2xx."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from policies.models import AuditEvent
from tests.api.helpers import client_for, problem
from tests.api.strict_responses import served_schema


@pytest.mark.parametrize(
    ("role", "path", "name"),
    [
        ("curator", "/api/v1/groundings/", "passage_id"),
        ("curator", "/api/v1/groundings/", "record_state"),
        ("curator", "/api/v1/groundings/", "ordering"),
        ("steward", "/api/v1/audit-events/", "grounding_id"),
        ("steward", "/api/v1/audit-events/", "outcome"),
    ],
)
def test_an_empty_uuid_or_enum_filter_is_refused_not_skipped(world, link, role, path, name):
    """`GET /api/v1/groundings/?passage_id=` was 200 (django-filter skips an empty
    value) although the schema's uuid format excludes the empty string."""
    response = client_for(getattr(world, role)).get(path, {name: ""})
    body = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [(f"/{name}", "blank")]


def test_an_empty_free_text_filter_still_matches_everything(world, link):
    response = client_for(world.curator).get("/api/v1/groundings/", {"statement_ref": ""})
    assert response.status_code == 200
    assert [r["grounding_id"] for r in response.json()["results"]] == [str(link.grounding_id)]


def _component(name: str) -> dict:
    return served_schema().document["components"]["schemas"][name]


def _admits(schema: dict, value) -> bool:
    document = served_schema().document
    root = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    registry = Registry().with_resource(
        "urn:served", Resource.from_contents({**document, "$schema": root["$schema"]})
    )
    text = json.dumps(root).replace('"#/components/', '"urn:served#/components/')
    checker = Draft202012Validator.FORMAT_CHECKER
    return Draft202012Validator(
        json.loads(text), registry=registry, format_checker=checker
    ).is_valid(value)


def _query_schema(path: str, name: str) -> dict:
    operation = served_schema().document["paths"][path]["get"]
    return next(p["schema"] for p in operation["parameters"] if p["name"] == name)


# (component, member, a value the server refuses, the offender it names)
REFUSED_MEMBERS = [
    # A blank once trimmed (DRF trims white space): "decision_ref (blank)".
    ("DecisionInputRequest", "decision_ref", "   ", "blank"),
    # A ref used as a URL path segment: "evidence_set_ref (control_character)".
    ("EvidenceSetCreateRequest", "evidence_set_ref", "a\x01b", "control_character"),
    ("EvidenceSetCreateRequest", "evidence_set_ref", "a/../b", "dot_segment"),
    # "change_ref (format)": no white space.
    ("ChangeNotificationCreateRequest", "change_ref", "two words", "format"),
    # An unstorable text: "unstorable_character" (a lone surrogate, U+0000).
    ("ChangeNotificationCreateRequest", "reason", "a\x00b", None),
]


@pytest.mark.parametrize(("component", "member", "value", "code"), REFUSED_MEMBERS)
def test_a_member_value_the_server_refuses_is_one_the_schema_refuses(
    component, member, value, code
):
    """Each was sent by schemathesis as schema-valid data and refused 400."""
    assert not _admits(_component(component)["properties"][member], value)


def test_a_blank_decision_ref_is_refused_and_the_schema_says_so(world):
    body = {
        "decision_ref": "   ", "dimension": world.dimension.name,
        "recipient_scope": "partner:acme", "purpose": "display", "fields": ["statement"],
    }  # fmt: skip
    response = client_for(world.access_steward).post(
        "/api/v1/disclosure-decisions/", body, format="json"
    )
    refused = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in refused["offenders"]] == [("/decision_ref", "blank")]
    assert _admits(_component("DecisionInputRequest")["properties"]["decision_ref"], "urn:d:1")


def test_a_change_ref_with_white_space_is_refused_and_the_schema_says_so(world):
    body = {
        "dimension": world.dimension.name, "change_ref": "\x1av", "kind": "answer",
        "subject_ref": "urn:answer:1", "observed_at": "2026-12-01T09:00:00Z",
        "reason": "republished",
    }  # fmt: skip
    response = client_for(world.curator).post("/api/v1/change-notifications/", body, format="json")
    refused = problem(response, 400, "validation_error")
    assert ("/change_ref", "format") in [(o["pointer"], o["code"]) for o in refused["offenders"]]
    properties = _component("ChangeNotificationCreateRequest")["properties"]
    assert not _admits(properties["change_ref"], "\x1av")
    assert _admits(properties["change_ref"], "urn:change:cms-8841")


def test_an_evidence_set_ref_with_a_control_character_is_refused(world):
    body = {"dimension": world.dimension.name, "evidence_set_ref": "a\x01b"}
    response = client_for(world.curator).post("/api/v1/evidence-sets/", body, format="json")
    refused = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in refused["offenders"]] == [
        ("/evidence_set_ref", "control_character")
    ]


def test_an_empty_bulk_is_refused_and_the_schema_states_min_items(world):
    response = client_for(world.curator).post(
        "/api/v1/groundings/bulk/", {"items": []}, format="json"
    )
    refused = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in refused["offenders"]] == [("/items", "required")]
    items = _component("BulkRegisterRequest")["properties"]["items"]
    assert (items["minItems"], items["maxItems"]) == (1, 1000)


def test_a_webhook_patch_names_active_and_the_schema_requires_it(world):
    created = client_for(world.steward).post(
        "/api/v1/webhooks/",
        {"dimension": world.dimension.name, "url": "https://93.184.215.14/hook"},
        format="json",
    )
    assert created.status_code == 201, created.content
    webhook = created.json()["webhook_id"]
    response = client_for(world.steward).patch(f"/api/v1/webhooks/{webhook}/", {}, format="json")
    refused = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in refused["offenders"]] == [("/active", "required")]
    assert _component("PatchedWebhookChangeRequest")["required"] == ["active"]


def test_a_webhook_url_the_server_refuses_as_written_the_schema_refuses(world):
    url = _component("WebhookInputRequest")["properties"]["url"]
    for refused in ("http://example.org/hook", "https://u:p@example.org/", "https:///x"):
        assert not _admits(url, refused), refused
    for admitted in ("https://example.org/hook", "https://example.org:8443/a?b=c"):
        assert _admits(url, admitted), admitted
    response = client_for(world.steward).post(
        "/api/v1/webhooks/",
        {"dimension": world.dimension.name, "url": "http://example.org/hook"},
        format="json",
    )
    body = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [("/url", "https_required")]


def test_a_query_value_with_u0000_is_refused_and_the_schema_says_so(world, link):
    """`GET /api/v1/evidence/passages/?content_sha256=-%00…` was refused 400
    (null_characters_not_allowed) although the schema admitted any string."""
    response = client_for(world.curator).get(
        "/api/v1/evidence/passages/", {"content_sha256": "a\x00b"}
    )
    problem(response, 400, "validation_error")
    schema = _query_schema("/api/v1/evidence/passages/", "content_sha256")
    assert not _admits(schema, "a\x00b") and _admits(schema, "abc")


@pytest.mark.parametrize("member", ["null%2Cnull", "not-a-uuid", "%C2%B2"])
def test_removing_a_malformed_member_id_is_404_not_the_set_route_s_405(world, member):
    """`DELETE /api/v1/evidence-sets/0/members/null%2Cnull/` fell through to the set's
    own route (its ref may hold "/"), which has no DELETE: an undeclared 405."""
    response = client_for(world.curator).delete(
        f"/api/v1/evidence-sets/0/members/{member}/", HTTP_IF_MATCH='"1"'
    )
    problem(response, 404, "not_found")
    refused = AuditEvent.objects.get(outcome="refused")
    assert (refused.action, refused.code) == ("change_evidence_set", "not_found")


@pytest.mark.parametrize(
    ("query", "pointer", "code"),
    [
        ({"subject_ref": "a\x00b"}, "/query/subject_ref", "unstorable_character"),
        ({"change_ref": "\x00"}, "/query/change_ref", "unstorable_character"),
        ({"kind": ""}, "/query/kind", "blank"),
        ({"observed_after": ""}, "/query/observed_after", "blank"),
    ],
)
def test_change_notification_filters_refuse_what_their_schema_excludes(world, query, pointer, code):
    """`GET /api/v1/change-notifications/?subject_ref=%00` was 200 (on SQLite) though
    the schema's pattern excludes U+0000; an empty kind was skipped though its enum
    has no empty member."""
    response = client_for(world.curator).get("/api/v1/change-notifications/", query)
    body = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [(pointer, code)]
    name = pointer.rsplit("/", 1)[1]
    assert not _admits(_query_schema("/api/v1/change-notifications/", name), query[name])


def test_a_profile_version_is_a_semantic_version_in_the_schema_too(world):
    """`POST /api/v1/profiles/` with version "0" was refused 400 (the model's
    validator) although the schema admitted any non-blank text."""
    version = _component("ProfileInputRequest")["properties"]["version"]
    assert not _admits(version, "0") and _admits(version, "1.0.0")
    name = _component("ProfileInputRequest")["properties"]["name"]
    assert not _admits(name, "Bad Name") and _admits(name, "wm-mem-016")


def test_a_passage_is_one_of_two_shapes_in_the_schema_as_in_the_server(world):
    """`POST /api/v1/groundings/bulk/` with a passage naming passage_id and an
    external passage's members was refused (derived_field, required) although the
    schema admitted any mix of the group's members."""
    from tests.api.helpers import register_body

    passage = _component("RegisterRequest")["properties"]["passage"]
    mixed = {"passage_id": str(world.passage.passage_id), "passage_ref": "urn:p:1"}
    assert not _admits(passage, mixed)
    assert _admits(passage, {"passage_id": str(world.passage.passage_id)})
    body = register_body(world, passage=mixed)
    response = client_for(world.curator).post("/api/v1/groundings/", body, format="json")
    refused = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in refused["offenders"]] == [
        ("/passage/passage_ref", "derived_field")
    ]


def test_an_anchor_observation_is_builtin_or_supplied_never_both(world, link):
    """`POST …/anchor-observations/` with resolver "builtin" and an observation's
    members was refused (unknown_field) although the schema admitted the mix."""
    body = _component("AnchorObservationRequest")
    mixed = {"resolver": "builtin", "status": "unresolved", "match_count": 0,
             "matches": [], "resolver_ref": "urn:r:1"}  # fmt: skip
    assert not _admits(body, mixed)
    assert _admits(body, {"resolver": "builtin"})
    assert _admits(body, {key: value for key, value in mixed.items() if key != "resolver"})
    # A resolved observation needs its text digest (the shipped schema's conditional).
    resolved = {"status": "resolved", "match_count": 1, "matches": [{"start": 0, "end": 3}],
                "resolver_ref": "urn:r:1"}  # fmt: skip
    assert not _admits(body, resolved)
    response = client_for(world.curator).post(
        f"/api/v1/groundings/{link.grounding_id}/anchor-observations/",
        mixed,
        format="json",
        HTTP_IF_MATCH=f'"{link.revision}"',
    )
    refused = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in refused["offenders"]] == [
        ("/match_count", "unknown_field"),
        ("/matches", "unknown_field"),
        ("/resolver_ref", "unknown_field"),
        ("/status", "unknown_field"),
    ]


def test_created_resources_link_to_the_operations_on_them_with_their_ids():
    """OpenAPI links (issue 26 item 5: schemathesis' stateful phase follows real ids)."""
    paths = served_schema().document["paths"]
    created = paths["/api/v1/groundings/"]["post"]["responses"]["201"]["links"]
    assert created["GroundingsPartialUpdate"] == {
        "operationId": "groundings_partial_update",
        "parameters": {
            "grounding_id": "$response.body#/grounding_id",
            "header.If-Match": "$response.header.ETag",
        },
    }
    assert {link["operationId"] for link in created.values()} >= {
        "groundings_read", "groundings_assessments_create", "groundings_withdrawal_create",
        "groundings_disposal_create", "groundings_projection_retrieve",
    }  # fmt: skip
    webhook = paths["/api/v1/webhooks/"]["post"]["responses"]["201"]["links"]
    assert webhook["WebhooksRead"]["parameters"] == {"webhook_id": "$response.body#/webhook_id"}


def test_a_profile_ref_is_name_at_version_in_the_schema_as_in_the_server(world):
    """`POST /api/v1/groundings/bulk/` with profile "0" was refused (/items/0/profile
    required: "profile is required as name@version") though the schema took any text."""
    from tests.api.helpers import register_body

    # from-citations: one body per format, each naming the profile.
    variants = [v["$ref"].rsplit("/", 1)[1] for v in _component("FromCitationsRequest")["oneOf"]]
    for component in ("RegisterRequest", *variants):
        profile = _component(component)["properties"]["profile"]
        assert not _admits(profile, "0") and _admits(profile, "wm-mem-016@1.0.0")
    body = {"items": [register_body(world, profile="0")]}
    response = client_for(world.curator).post("/api/v1/groundings/bulk/", body, format="json")
    refused = problem(response, 400, "validation_error")
    assert ("/items/0/profile", "required") in [
        (o["pointer"], o["code"]) for o in refused["offenders"]
    ]


def test_a_conditional_of_a_shipped_schema_still_refuses_what_the_server_refuses():
    """The storable pattern put inside `if: {type: string}` turned the test around: a
    string with U+0000 escaped its `then` (an enum) and was schema-valid
    (time_uncertainty.applicability_interval, refused by the server)."""
    uncertainty = _component("TimeUncertainty")
    assert not _admits(uncertainty, {"applicability_interval": "day\x00"})
    assert not _admits(uncertainty, {"applicability_interval": "fortnight"})
    assert _admits(uncertainty, {"applicability_interval": "day"})
    assert "pattern" not in uncertainty["properties"]["asserted_at"]["if"]


def test_a_nullable_text_member_is_storable_text_in_the_schema(world):
    """`context_ref: "\\u0000…"` (a nullable ref) was schema-valid: its type
    ["string", "null"] got no pattern. The server refuses it (unstorable_character)."""
    from tests.api.helpers import register_body

    context_ref = _component("AnchorRequest")["properties"]["context_ref"]
    assert not _admits(context_ref, "\x00a") and _admits(context_ref, None)
    body = register_body(world)
    body["anchor"]["context_ref"] = "\x00a"
    response = client_for(world.curator).post("/api/v1/groundings/", body, format="json")
    refused = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in refused["offenders"]] == [
        ("/anchor/context_ref", "unstorable_character")
    ]


@pytest.mark.parametrize("value", ["https://a\x85b/", "a\x85b"])
def test_u0085_is_white_space_to_the_schema_as_to_the_server(value):
    """U+0085 is white space to Python (the server), not to ECMA-262's \\s: a webhook
    URL holding it was schema-valid and refused (url holds whitespace)."""
    url = _component("WebhookInputRequest")["properties"]["url"]
    change_ref = _component("ChangeNotificationCreateRequest")["properties"]["change_ref"]
    assert not _admits(url if value.startswith("https") else change_ref, value)
    decision_ref = _component("DecisionInputRequest")["properties"]["decision_ref"]
    assert not _admits(decision_ref, "\x85")


def test_a_shipped_pattern_that_admits_u0000_gets_the_storable_rule_beside_it():
    """`answer_representation.media_type` "text/plain; a=\\u0000" matched the shipped
    pattern (a parameter value is [^;]*) and was refused (unstorable_character)."""
    media_type = _component("AnswerRepresentation")["properties"]["media_type"]
    assert not _admits(media_type, "text/plain; a=\x00")
    assert _admits(media_type, "text/plain; charset=utf-8")


@pytest.mark.parametrize("blank", ["\x1e", "\x1c \x1f", "\x85"])
def test_python_white_space_ecma_does_not_know_is_blank_in_the_schema(blank):
    """A support_vocabulary item "\\u001e" was refused blank (DRF strips it: Python
    white space) though ECMA-262's \\s, which the schema's readers use, does not
    include it."""
    items = _component("ProfileInputRequest")["properties"]["support_vocabulary"]["items"]
    assert not _admits(items, blank) and _admits(items, "quotation")
