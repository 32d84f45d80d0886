"""OpenAPI examples, from the demo data `seed_demo` loads (grounding.management.demo_data),
so what Swagger shows can be sent as is against `make run`'s demo Dimension."""

from __future__ import annotations

from types import SimpleNamespace

from drf_spectacular.utils import OpenApiExample

from grounding.management import demo_data

# A passage id as the demo import reports one (each import mints its own).
DEMO_PASSAGE_ID = "0193a5c2-7e4b-7c1d-9f00-3a1b2c3d4e5f"
_passage = SimpleNamespace(passage_id=DEMO_PASSAGE_ID)

REGISTER_BODY = demo_data._payload(_passage, "s1", "opened in 1932")

REGISTER = OpenApiExample(
    "demo link (quotation)",
    summary="The demo's first link: a quotation of the harbour bridge page",
    value=REGISTER_BODY,
    request_only=True,
)
BULK = OpenApiExample(
    "two demo links",
    value={"items": [REGISTER_BODY, demo_data._payload(_passage, "s3", "steel arch")]},
    request_only=True,
)
REVISE = OpenApiExample(
    "narrow the support scope",
    value={
        "revision_reason": "support covers the opening year only",
        "support": {"support_scope": {"covers": "opening year"}},
    },
    request_only=True,
)
ASSESSMENT = OpenApiExample(
    "a supporting verdict",
    value={
        "assessment_ref": "urn:eval:demo/1",
        "reviewer_ref": "urn:reviewer:demo",
        "reviewer_kind": "automated",
        "authority_ref": "urn:policy:demo:review@1",
        "method_ref": "urn:method:nli@2",
        "verdict": "supporting",
        "assessed_inputs": {"grounding_revision": 1},
        "assessed_at": "2026-11-30T12:05:00Z",
    },
    request_only=True,
)
ANCHOR_BUILTIN = OpenApiExample(
    "run the builtin resolver", value={"resolver": "builtin"}, request_only=True
)
WITHDRAWAL = OpenApiExample(
    "withdraw from display",
    value={
        "reason": "the page was retracted",
        "authority_ref": "urn:policy:demo:withdrawal@1",
        "scope": "display",
    },
    request_only=True,
)
DISPOSAL = OpenApiExample(
    "dispose under the retention policy",
    value={"receipt_ref": "urn:receipt:demo/1", "policy_ref": "urn:policy:demo:retention@1"},
    request_only=True,
)
CHANGE_NOTIFICATION = OpenApiExample(
    "the harbour bridge page changed",
    value={
        "dimension": "demo",
        "change_ref": "urn:change:cms-8841",
        "kind": "source",
        "subject_ref": demo_data.DOCUMENTS[0][0],
        "observed_at": "2026-12-01T09:00:00Z",
        "reason": "page re-published",
    },
    request_only=True,
)
