"""POST /api/v1/groundings/from-citations/ with crw evidence: `crw-extract` basis
items under the FieldStatus contract, `crw-search` highlights over crw's normalized
markdown. Recorded, never judged; atomic; idempotent on re-post."""

from __future__ import annotations

import copy
import hashlib

import pytest
from rest_framework.test import APIClient

from evidence.offsets import codepoint_to_utf8, codepoint_to_utf16
from grounding.citations.crw_normalize import normalize
from grounding.models import AnchorObservation, GroundingLink
from policies.models import AuditEvent
from tests import factories
from tests.citations import helpers
from tests.citations.helpers import PROBLEM, URL, load, nfc

pytestmark = [
    pytest.mark.urls("tests.citations.urls"),
    pytest.mark.django_db,
    pytest.mark.usefixtures("fresh_throttle"),
]

PAGE_URL = "https://example.org/ulm-bridge"
ARCHIVE_URL = "https://archive.example/ulm"


def external(source_ref: str) -> dict:
    return helpers.external(source_ref, "text/markdown")


@pytest.fixture
def page_text() -> str:
    # As fetched: CRLF, trailing whitespace, blank runs, NFD, astral characters.
    return load("crw_page.json")["markdown"]


@pytest.fixture
def page(world, page_text):
    return factories.make_passage(page_text, canonical_url=PAGE_URL, dimension=world.dimension)


def body(world, page, fmt: str, **overrides) -> dict:
    out = {
        "dimension": world.dimension.name,
        "profile": world.profile.ref,
        "answer_revision_ref": f"urn:answer:{fmt}@1",
        "format": fmt,
        "payload": load("crw_extract.json" if fmt == "crw-extract" else "crw_search.json"),
        "passages": {
            PAGE_URL: {"passage_id": str(page.passage_id)},
            ARCHIVE_URL: external(ARCHIVE_URL),
            "https://news.example/ulm": external("https://news.example/ulm"),
            # https://unmapped.example/ is deliberately not mapped.
        },
    }
    out.update(overrides)
    return out


def post(user, data):
    api = APIClient()
    api.force_authenticate(user)
    return api.post(URL, data, format="json")


def link_of(entry: dict) -> GroundingLink:
    return GroundingLink.objects.select_related(
        "current_statement", "current_passage", "current_anchor_observation"
    ).get(pk=entry["grounding_id"])


# -- crw-extract


def test_each_field_status_gives_its_link_or_its_reported_skip(world, page):
    response = post(world.curator, body(world, page, "crw-extract"))
    assert response.status_code == 201, response.json()
    report = response.json()
    assert report["counts"] == {"created": 7, "replayed": 0, "skipped": 3}
    fields = {c["provider_data"]["field"]: c for c in report["citations"]}
    outcomes = {name: (c["outcome"], c.get("reason"), c["anchor"], c.get("anchor_reason"))
                for name, c in fields.items()}  # fmt: skip
    assert outcomes == {
        "opened": ("created", None, "resolved", None),
        "price": ("created", None, "ambiguous", None),  # the excerpt occurs twice
        "length": ("created", None, "resolved", None),
        "architect": ("created", None, "unresolved", "source_hash_mismatch"),
        "river": ("created", None, "unresolved", "no_match"),  # not contained
        "tours": ("created", None, "unattempted", None),  # unverified: no span invented
        "rating": ("skipped", "basis_unsupported", "unattempted", None),
        "closing": ("skipped", "basis_not_found", "unattempted", None),
        "founded": ("skipped", "passage_not_mapped", "unattempted", None),
        "opened_by": ("created", None, "unattempted", None),  # external: no text held
    }
    assert fields["length"]["source_hash_check"] == "match"
    assert fields["architect"]["source_hash_check"] == "mismatch"
    assert fields["opened"]["source_hash_check"] == "not_held"
    assert fields["opened_by"]["source_hash_check"] == "no_local_text"
    assert (
        fields["rating"]["statement_pointer"] == "/rating"
        and "grounding_id" not in (fields["rating"])
    )


def test_a_supported_field_is_a_quote_resolved_in_the_passage_text(world, page, page_text):
    report = post(world.curator, body(world, page, "crw-extract")).json()
    entry = next(c for c in report["citations"] if c["statement_pointer"] == "/opened")
    link = link_of(entry)
    statement = link.current_statement
    assert statement.statement_ref == "urn:answer:crw-extract@1#/opened"
    assert statement.answer_selector == {
        "type": "FragmentSelector", "value": "/opened",
        "conformsTo": "http://tools.ietf.org/rfc/rfc6901",
    }  # fmt: skip
    assert statement.claim_scope == {"proposition": "opened = 1932"}
    assert statement.answer_representation == {"language": "und",
                                               "media_type": "application/json"}  # fmt: skip
    passage = link.current_passage
    assert passage.source_selector == {"type": "TextQuoteSelector",
                                       "exact": "the bridge opened in 1932."}  # fmt: skip
    # The LLM-input hash covers text the registry does not hold: recorded, not checked.
    digest = load("crw_extract.json")["basis"][0]["citations"][0]["sourceHash"]
    assert passage.transformation_ref == f"urn:crw:source-text:llmInput:{digest}"
    observation = link.current_anchor_observation
    assert observation.resolver_ref == "urn:grounding:resolver:builtin@1"
    assert observation.anchor_result["matches"] == [{"start": 37, "end": 63}]
    assert nfc(page_text)[37:63] == "the bridge opened in 1932."
    # confidence "high" is data: the link stays an unassessed candidate.
    assert entry["provider_data"]["confidence"] == "high"
    assert (link.record_state, link.display_state, link.support_kind, link.use_basis) == (
        "candidate", "unassessed", "quotation", "unknown",
    )  # fmt: skip
    assert link.revision == 2 and link.assessments.count() == 0


def test_a_repeated_excerpt_is_ambiguous_with_every_match(world, page):
    report = post(world.curator, body(world, page, "crw-extract")).json()
    entry = next(c for c in report["citations"] if c["statement_pointer"] == "/price")
    result = link_of(entry).current_anchor_observation.anchor_result
    assert (result["status"], result["match_count"]) == ("ambiguous", 2)
    assert link_of(entry).resolution_state == "ambiguous"


def test_a_markdown_hash_mismatch_leaves_the_anchor_unresolved(world, page):
    report = post(world.curator, body(world, page, "crw-extract")).json()
    entry = next(c for c in report["citations"] if c["statement_pointer"] == "/architect")
    link = link_of(entry)
    result = link.current_anchor_observation.anchor_result
    assert (result["status"], result["reason"]) == ("unresolved", "source_hash_mismatch")
    assert result["resolver_ref"] == "urn:grounding:resolver:citation-check@1"
    # Never retargeted: the excerpt stays the selector.
    assert link.current_passage.source_selector["exact"] == "designed by Karl Schmidt"
    assert link.current_passage.transformation_ref == ""


def test_an_unverified_field_claims_the_document_not_a_span(world, page):
    report = post(world.curator, body(world, page, "crw-extract")).json()
    entry = next(c for c in report["citations"] if c["statement_pointer"] == "/tours")
    link = link_of(entry)
    assert link.current_passage.source_selector["value"] == "locator=crw_evidence_citation"
    assert link.current_anchor_observation is None and link.revision == 1
    assert (link.support_kind, entry["source_span"]) == ("contextual", None)
    assert entry["source_span_note"] == "crw established the document, not the span"


@pytest.mark.parametrize(
    ("mutate", "pointer"),
    [
        (lambda b: b[0].update(value=None), "/payload/basis/0/value"),
        (lambda b: b[5]["citations"][0].update(excerpt="x"),
         "/payload/basis/5/citations/0/excerpt"),
        (lambda b: b[6]["citations"].append(copy.deepcopy(b[0]["citations"][0])),
         "/payload/basis/6/citations"),
        (lambda b: b[7].pop("citations"), "/payload/basis/7/citations"),
        (lambda b: b[2].update(basisVersion=2), "/payload/basis/2/basisVersion"),
    ],
)  # fmt: skip
def test_a_contract_violation_refuses_the_whole_request_and_is_audited(
    world, page, mutate, pointer
):
    data = body(world, page, "crw-extract")
    mutate(data["payload"]["basis"])
    response = post(world.curator, data)
    assert response.status_code == 400
    assert response["Content-Type"].startswith(PROBLEM)
    problem = response.json()
    assert problem["code"] == "validation_error"
    assert [o["pointer"] for o in problem["offenders"]] == [pointer]
    assert GroundingLink.objects.count() == 0 and AnchorObservation.objects.count() == 0
    refusal = AuditEvent.objects.get(action="register_from_citations")
    assert (refusal.outcome, refusal.code) == ("refused", "validation_error")


def test_reposting_an_extract_creates_nothing(world, page):
    data = body(world, page, "crw-extract")
    first = post(world.curator, data).json()
    counts = (GroundingLink.objects.count(), AnchorObservation.objects.count())
    again = post(world.curator, copy.deepcopy(data))
    assert again.status_code == 200
    replay = again.json()
    assert replay["replayed"] is True and replay["counts"]["replayed"] == 7
    assert replay["links"] == first["links"]
    assert [c["anchor"] for c in replay["citations"]] == [c["anchor"] for c in first["citations"]]
    assert counts == (GroundingLink.objects.count(), AnchorObservation.objects.count())


@pytest.mark.parametrize("fmt", ["crw-extract", "crw-search"])
def test_only_a_curator_may_register_crw_links(world, page, fmt):
    for user, status, code in ((world.reviewer, 403, "role_required"),
                               (world.projection_agent, 403, "role_required"),
                               # Outside the caller's Dimensions the Dimension is unknown.
                               (world.outsider, 400, "validation_error")):  # fmt: skip
        response = post(user, body(world, page, fmt))
        assert response.status_code == status
        assert response.json()["code"] == code
    assert GroundingLink.objects.count() == 0
    assert APIClient().post(URL, body(world, page, fmt), format="json").status_code == 401
    assert AuditEvent.objects.filter(action="register_from_citations", outcome="refused").count()


# -- crw-search


def test_highlights_are_mapped_from_crws_markdown_to_the_passage_text(world, page, page_text):
    response = post(world.curator, body(world, page, "crw-search"))
    assert response.status_code == 201, response.json()
    report = response.json()
    assert report["counts"] == {"created": 7, "replayed": 0, "skipped": 3}
    rows = [(c["outcome"], c.get("reason"), c["anchor"], c.get("anchor_reason"), c["source_span"])
            for c in report["citations"]]  # fmt: skip
    span = lambda s, e: {"start": s, "end": e}  # noqa: E731
    assert rows == [
        ("created", None, "resolved", None, span(37, 63)),  # hash matches
        ("created", None, "resolved", None, span(58, 91)),  # across a dropped "   \r"
        ("created", None, "resolved", None, span(121, 136)),  # after 𝔘, 🌉, CRLFs
        ("created", None, "unresolved", "highlight_text_mismatch", span(68, 91)),
        ("created", None, "unresolved", "source_hash_mismatch", None),
        ("created", None, "resolved", None, span(140, 153)),  # NFD "Café" composes
        ("skipped", "source_offset_not_convertible", "unattempted", None, None),
        ("created", None, "unattempted", None, span(40, 54)),  # external: as given
        ("skipped", "no_highlights", "unattempted", None, None),
        ("skipped", "passage_not_mapped", "unattempted", None, None),
    ]
    text = nfc(page_text)
    assert text[37:63] == "the bridge opened in 1932."
    assert text[58:91] == "1932.   \r\nPrice: €19.99 per tour."
    assert text[121:136] == "Length: 𝔘 120 m" and text[140:153] == "Café “Brücke”"
    assert report["citations"][0]["source_hash_check"] == "match"
    assert report["citations"][7]["source_span_note"].startswith("passage text not held here")
    assert report["citations"][0]["provider_data"] == {
        "position": 1, "score": 0.91,
        "source_hash": load("crw_search.json")["sources"][0]["highlights"][0]["sourceHash"],
    }  # fmt: skip


def test_a_highlight_link_is_the_whole_answer_to_a_quoted_position(world, page):
    report = post(world.curator, body(world, page, "crw-search")).json()
    first = link_of(report["citations"][0])
    answer = load("crw_search.json")["answer"]
    assert first.current_statement.statement_ref == "urn:answer:crw-search@1#cp=0-64"
    assert first.current_statement.claim_scope == {"proposition": answer}
    assert first.current_passage.source_selector == {
        "type": "TextPositionSelector", "start": 37, "end": 63,
        "refinedBy": {"type": "TextQuoteSelector", "exact": "the bridge opened in 1932."},
    }  # fmt: skip
    assert first.current_anchor_observation.anchor_result["matches"] == [{"start": 37, "end": 63}]
    # score is relevance to a query: the link is contextual and unassessed.
    assert (first.support_kind, first.display_state) == ("contextual", "unassessed")
    # A text mismatch keeps the provider's position and quote; nothing is retargeted.
    mismatch = link_of(report["citations"][3])
    assert mismatch.current_passage.source_selector == {
        "type": "TextPositionSelector", "start": 68, "end": 91,
        "refinedBy": {"type": "TextQuoteSelector", "exact": "Price: €20 per tour."},
    }  # fmt: skip
    # A hash mismatch: the offsets index another text, so only the quote is kept.
    other = link_of(report["citations"][4])
    assert other.current_passage.source_selector == {
        "type": "TextQuoteSelector", "exact": "the bridge opened in 1932."
    }  # fmt: skip
    assert other.resolution_state == "unknown"


@pytest.mark.parametrize(("unit", "convert"), [("utf16", codepoint_to_utf16),
                                               ("utf8", codepoint_to_utf8)])  # fmt: skip
def test_a_declared_offset_unit_gives_the_same_spans(world, page, page_text, unit, convert):
    baseline = post(world.curator, body(world, page, "crw-search")).json()
    markdown = normalize(page_text).text
    data = body(world, page, "crw-search", offset_unit=unit, answer_revision_ref="urn:a:u@1")
    for highlight in data["payload"]["sources"][0]["highlights"][:6]:
        for key in ("charStart", "charEnd"):
            highlight[key] = convert(markdown, highlight[key])
    report = post(world.curator, data).json()
    assert [c["source_span"] for c in report["citations"][:6]] == [
        c["source_span"] for c in baseline["citations"][:6]
    ]
    assert [c["anchor"] for c in report["citations"][:6]] == [
        c["anchor"] for c in baseline["citations"][:6]
    ]


def test_an_offset_inside_a_character_is_skipped_not_rounded(world, page, page_text):
    markdown = normalize(page_text).text
    data = body(world, page, "crw-search", offset_unit="utf16")
    highlight = data["payload"]["sources"][0]["highlights"][2]  # "Length: 𝔘 120 m"
    inside = codepoint_to_utf16(markdown, markdown.index("𝔘")) + 1
    highlight.update(charStart=inside, charEnd=inside + 4)
    cited = post(world.curator, data).json()["citations"][2]
    assert (cited["outcome"], cited["reason"]) == ("skipped", "source_offset_not_convertible")


def test_reposting_a_search_creates_nothing(world, page):
    data = body(world, page, "crw-search")
    first = post(world.curator, data).json()
    again = post(world.curator, copy.deepcopy(data))
    assert again.status_code == 200
    assert again.json()["links"] == first["links"] and again.json()["created"] == 0


def test_a_malformed_search_payload_writes_nothing(world, page):
    data = body(world, page, "crw-search")
    data["payload"]["sources"][0]["highlights"][0]["charEnd"] = 1
    response = post(world.curator, data)
    assert response.status_code == 400
    assert [o["pointer"] for o in response.json()["offenders"]] == [
        "/payload/sources/0/highlights/0/charEnd"
    ]
    assert GroundingLink.objects.count() == 0


def test_the_page_hash_is_crws_own(page_text):
    # The fixture's sourceHash is the bare hex sha256 of the normalized markdown.
    given = load("crw_search.json")["sources"][0]["highlights"][0]["sourceHash"]
    assert given == hashlib.sha256(normalize(page_text).text.encode("utf-8")).hexdigest()


def test_a_field_too_long_for_a_statement_ref_points_at_its_basis_item(world, page):
    data = body(world, page, "crw-extract")
    data["payload"]["basis"][6]["field"] = "f" * 600  # unsupported: no link, no ref
    data["payload"]["basis"][5]["field"] = "t" * 600
    problem = post(world.curator, data).json()
    assert problem["code"] == "validation_error"
    assert [(o["pointer"], o["code"]) for o in problem["offenders"]] == [
        ("/payload/basis/5", "max_length")
    ]
    assert GroundingLink.objects.count() == 0
