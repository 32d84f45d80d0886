"""Text no column can hold (U+0000, lone surrogates) is a 400 naming each string,
before any lookup or write: never a 500 from the database."""

import json

import pytest

from grounding.models import GroundingLink
from policies.models import AuditEvent
from tests.api.helpers import client_for, pointers, problem, register_body


def _post(client, path: str, body: dict):
    # Lone surrogates cannot be encoded by the test client's JSON encoder: escape them.
    raw = json.dumps(body, ensure_ascii=True)
    return client.post(path, raw, content_type="application/json")


@pytest.mark.parametrize("bad", ["a\x00b", "half \ud800 a pair"])
def test_register_refuses_unstorable_text_with_its_pointer(world, bad):
    body = register_body(world, owner_ref=bad)
    body["statement"]["claim_scope"] = {"note": bad}
    response = _post(client_for(world.curator), "/api/v1/groundings/", body)
    payload = problem(response, 400, "validation_error")
    assert pointers(payload) == ["/owner_ref", "/statement/claim_scope/note"]
    assert {o["code"] for o in payload["offenders"]} == {"unstorable_character"}
    assert GroundingLink.objects.count() == 0
    refused = AuditEvent.objects.get(action="register", outcome="refused")
    assert (refused.code, refused.dimension_ref) == ("validation_error", world.dimension.name)


def test_bulk_register_names_the_item_and_the_member_name(world):
    good = register_body(world)
    bad = register_body(world, dimension="demo\x00")
    bad["support"]["support_scope"] = {"k\x00": "v"}
    response = _post(client_for(world.curator), "/api/v1/groundings/bulk/", {"items": [good, bad]})
    payload = problem(response, 400, "validation_error")
    assert pointers(payload) == ["/items/1/dimension", "/items/1/support/support_scope/k\x00"]
    assert GroundingLink.objects.count() == 0
    # The refused event names no Dimension it could not hold.
    assert AuditEvent.objects.get(action="register_bulk", outcome="refused").dimension_ref == ""


def test_an_over_long_dimension_name_is_unknown_not_a_server_error(world):
    response = _post(
        client_for(world.curator), "/api/v1/groundings/", register_body(world, dimension="d" * 80)
    )
    payload = problem(response, 400, "validation_error")
    assert "/dimension" in pointers(payload)
    assert AuditEvent.objects.get(action="register", outcome="refused").dimension_ref == ""
