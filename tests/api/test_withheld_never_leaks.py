"""Withheld content never appears anywhere a reader can look: bodies, errors,
ETags and other headers, list filter echoes, history listings, and logs."""

import logging

import pytest

from grounding import services
from policies import governance
from policies.choices import Role
from tests import factories
from tests.api.helpers import client_for, if_match, url

SECRET_TEXT = "sealed deposition of witness K"
SECRET_TITLE = "Witness K transcript"


@pytest.fixture
def restricted_link(world):
    passage = factories.make_passage(
        f"Under seal: the {SECRET_TEXT} says the bridge opened in 1932.",
        title=SECRET_TITLE,
        dimension=world.dimension,
    )
    passage.access_label = "restricted"
    passage._change_reason = "restricted by the source owner"
    passage.save()
    payload = factories.link_payload(world.dimension, world.profile, passage)
    payload["anchor"]["source_selector"] = {"type": "TextQuoteSelector", "exact": SECRET_TEXT}
    link = services.register(actor=world.curator, payload=payload)
    services.record_anchor_observation(
        actor=world.curator, grounding_id=link.pk, expected_revision=1, use_builtin_resolver=True
    )
    return link


def _everything(response) -> str:
    headers = "\n".join(f"{k}: {v}" for k, v in response.items())
    return headers + "\n" + response.content.decode("utf-8", "replace")


def test_a_reviewer_sees_no_restricted_source_text_anywhere(world, restricted_link, caplog):
    # The reviewer's internal decision does not name restricted sources.
    client = client_for(world.reviewer)
    caplog.set_level(logging.DEBUG)
    responses = [
        client.get(url(restricted_link.pk)),
        client.get("/api/v1/groundings/", {"dimension": world.dimension.name}),
        client.get(
            "/api/v1/groundings/",
            {"statement_ref": "urn:answer:42#s3", "support_kind": "quotation"},
        ),
        client.get(url(restricted_link.pk, "revisions/")),
        client.get(url(restricted_link.pk, "revisions/1/")),
        client.get(url(restricted_link.pk, "revisions/2/")),
        client.get(url(restricted_link.pk, "revisions/99/")),
        client.post(
            url(restricted_link.pk, "assessments/"),
            factories.assessment_body(1),
            format="json",
            **if_match(1),
        ),
        client.post(
            url(restricted_link.pk, "assessments/"),
            factories.assessment_body(5),
            format="json",
            **if_match(2),
        ),
    ]
    statuses = [r.status_code for r in responses]
    assert statuses == [200, 200, 200, 200, 200, 200, 404, 412, 409]
    body = responses[0].json()
    assert {"passage.excerpt", "passage.title", "anchor.selector"} <= set(body["withheld"])
    for response in responses:
        text = _everything(response)
        assert SECRET_TEXT not in text, response.request["PATH_INFO"]
        assert SECRET_TITLE not in text, response.request["PATH_INFO"]
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert SECRET_TEXT not in logged
    assert SECRET_TITLE not in logged


def test_a_partner_without_the_restricted_grant_sees_no_source_text(world, restricted_link):
    governance.record_disclosure_decision(
        actor=world.access_steward,
        dimension=world.dimension,
        values={
            "decision_ref": "urn:access:partner",
            "recipient_scope": "partner:acme",
            "purpose": "citation-display",
            "fields": ["statement", "support", "passage.title", "passage.excerpt"],
        },
    )
    agent = factories.user_with_roles(world.dimension, Role.PROJECTION_AGENT)
    for fmt in ("native", "web-annotation", "prov-o"):
        response = client_for(agent).get(
            url(restricted_link.pk, "projection/"),
            {"recipient": "partner:acme", "purpose": "citation-display", "format": fmt},
        )
        assert response.status_code == 200, response.content[:300]
        text = _everything(response)
        assert SECRET_TEXT not in text, fmt
        assert SECRET_TITLE not in text, fmt


def test_the_curator_whose_decision_names_restricted_sources_does_see_it(world, restricted_link):
    # Control: the text is there to leak, so the tests above can fail.
    response = client_for(world.curator).get(url(restricted_link.pk))
    assert response.status_code == 200
    body = response.json()
    assert SECRET_TEXT in body["passage"]["excerpt"]
    assert body["passage"]["title"] == SECRET_TITLE
    assert body["withheld"] == []
