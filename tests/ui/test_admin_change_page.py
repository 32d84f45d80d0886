"""The curator's change page: proposition, highlighted passage, assessments and why the
link displays as it does, notifications, and the withdraw / assess forms on the page."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from grounding import services
from grounding.models import Assessment, GroundingLink
from policies.models import AuditEvent
from tests import factories
from tests.ui.test_admin import change_url, form_values, staff
from tests.ui.test_admin_changes import notify
from tests.ui.test_pages import narrow_reviewer_decision, resolved

pytestmark = pytest.mark.urls("tests.ui.urls")
MARK = '<mark class="anchor-match" data-match="1" title="match 1 of 1">opened in 1932</mark>'


def assess(world, link, verdict, **overrides):
    link.refresh_from_db()
    return services.bind_assessment(
        actor=world.reviewer,
        grounding_id=link.pk,
        expected_revision=link.revision,
        assessment=factories.assessment_body(link.revision, verdict=verdict, **overrides),
    )


def disputed(world, link):
    resolved(world, link)
    assess(world, link, "supporting", assessment_ref="urn:eval:a")
    assess(world, link, "conflicting", assessment_ref="urn:eval:b")
    link.refresh_from_db()
    assert link.display_state == "disputed"
    return link


def rows(html: str) -> dict[str, str]:
    table = html[html.index('id="assessments-table"') :]
    table = table[: table.index("</table>")]
    found = re.findall(r'<tr[^>]*data-assessment="([^"]+)">(.*?)</tr>', table, re.S)
    return {ref: re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)).strip() for ref, body in found}


def test_the_page_shows_proposition_highlighted_quote_and_why_disputed(client, world, link):
    disputed(world, link)
    staff(world.curator)
    client.force_login(world.curator)
    html = client.get(change_url(link)).content.decode()
    assert '<p class="registry-proposition" id="proposition">The bridge opened in 1932.</p>' in html
    assert MARK in html and html.count("<mark") == 1
    assert "resolved</span> 1 match" in html and "computed over the text shown" in html
    table = rows(html)
    assert table["urn:eval:a"].split(" ")[:2] == ["urn:eval:a", "supporting"]
    assert "urn:reviewer:r1 (automated)" in table["urn:eval:a"]
    assert "current" in table["urn:eval:b"] and "competing" in table["urn:eval:b"]
    reason = re.search(r'id="display-reason">(.*?)</p>', html, re.S).group(1)
    assert "display: disputed" in reason
    assert "2 current, authorized assessments disagree (conflicting, supporting)" in reason
    assert "selection_basis_ref" in reason


def test_a_selection_basis_picks_one_and_a_stale_one_says_so(client, world, link):
    disputed(world, link)
    assess(world, link, "conflicting", assessment_ref="urn:eval:c", selection_basis_ref="urn:p:s")
    staff(world.curator)
    client.force_login(world.curator)
    table = rows(client.get(change_url(link)).content.decode())
    assert (
        "(selected)" in table["urn:eval:c"]
        and "selected by policy (urn:p:s)" in table["urn:eval:c"]
    )
    link.refresh_from_db()
    services.revise(
        actor=world.curator,
        grounding_id=link.pk,
        expected_revision=link.revision,
        changes={"statement": {"statement_ref": "urn:answer:42#s9"}, "revision_reason": "rebind"},
    )
    html = client.get(change_url(link)).content.decode()
    table = rows(html)
    assert all("stale" in row for row in table.values())
    assert "(selected)" not in html
    assert "display: unassessed" in html


def test_withheld_groups_stay_withheld_on_the_page(client, world, link):
    disputed(world, link)
    narrow_reviewer_decision(world, ["support"])
    staff(world.reviewer)
    client.force_login(world.reviewer)
    html = client.get(change_url(link)).content.decode()
    assert "The bridge opened in 1932." not in html and "opened in 1932" not in html
    assert '<p class="registry-withheld" id="proposition">withheld</p>' in html
    assert '<p class="registry-withheld" id="passage-text">withheld</p>' in html
    assert "<mark" not in html
    table = rows(html)
    assert table["urn:eval:a"].startswith("urn:eval:a withheld withheld")
    review = html[html.index('id="assessments"') : html.index('id="notifications"')]
    assert "urn:reviewer:r1" not in html and "supporting" not in review
    assert "their verdicts are withheld from you" in html


def test_a_highlight_only_when_the_result_was_computed_over_the_shown_text(world):
    from grounding.templatetags.grounding_tags import highlight

    result = {"status": "resolved", "match_count": 1, "matches": [{"start": 0, "end": 3}]}
    assert "<mark" not in str(highlight("<b>old</b>", {**result, "text_sha256": "0" * 64}))
    assert str(highlight("<b>old</b>", {**result, "text_sha256": "0" * 64})) == (
        "&lt;b&gt;old&lt;/b&gt;"
    )


def test_the_notification_that_sent_it_to_review_is_listed(client, world, link):
    notify(world)
    staff(world.curator)
    client.force_login(world.curator)
    html = client.get(change_url(link)).content.decode()
    section = html[html.index('id="notifications"') :]
    assert "urn:change:cms-1" in section and "(sent it to review)" in section
    assert "re-published" in section


def test_withdraw_from_the_page(client, world, link):
    staff(world.curator)
    client.force_login(world.curator)
    assert 'id="withdraw-link-form"' in client.get(change_url(link)).content.decode()
    response = client.post(
        change_url(link),
        {
            "_action": "withdraw",
            "withdraw-loaded_revision": "1",
            "withdraw-reason": "the source was retracted",
            "withdraw-authority_ref": "urn:decision:retraction-7",
            "withdraw-scope": "display",
        },
    )
    assert response.status_code == 302
    link.refresh_from_db()
    assert (link.record_state, link.revision) == ("withdrawn", 2)
    page = client.get(change_url(link)).content.decode()
    assert "Withdrawn." in page and 'id="withdraw-link-form"' not in page


def test_a_withdrawal_from_a_stale_page_is_refused_by_code(client, world, link):
    resolved(world, link)  # now at revision 2; the page was loaded at 1
    staff(world.curator)
    client.force_login(world.curator)
    response = client.post(
        change_url(link),
        {
            "_action": "withdraw",
            "withdraw-loaded_revision": "1",
            "withdraw-reason": "retracted",
            "withdraw-authority_ref": "urn:decision:r",
        },
    )
    assert response.status_code == 200
    assert "(revision_mismatch)" in response.content.decode()
    link.refresh_from_db()
    assert link.record_state == "candidate"
    assert AuditEvent.objects.filter(action="withdraw", outcome="refused").exists()


def test_assess_from_the_page_and_a_refusal_by_code(client, world, link):
    staff(world.reviewer)
    client.force_login(world.reviewer)
    html = client.get(change_url(link)).content.decode()
    assert 'id="assess-form"' in html and 'id="withdraw-link-form"' not in html
    body = {
        "_action": "assess",
        "assess-loaded_revision": "1",
        "assess-assessment_ref": "urn:eval:page/1",
        "assess-verdict": "supporting",
        "assess-reviewer_ref": "urn:reviewer:me",
        "assess-reviewer_kind": "human",
        "assess-method_ref": "urn:method:reading@1",
        "assess-authority_ref": "urn:policy:review@1",
    }
    assert client.post(change_url(link), body).status_code == 302
    bound = Assessment.objects.get(link=link)
    assert (bound.assessment_ref, bound.verdict, bound.grounding_revision) == (
        "urn:eval:page/1",
        "supporting",
        1,
    )
    link.refresh_from_db()
    assert link.display_state == "visible"
    again = client.post(change_url(link), {**body, "assess-loaded_revision": "2"})
    assert again.status_code == 200
    assert "(assessment_duplicate)" in again.content.decode()
    assert Assessment.objects.filter(link=link).count() == 1


def test_a_curator_without_the_reviewer_role_is_refused_by_the_service(client, world, link):
    staff(world.curator)
    client.force_login(world.curator)
    response = client.post(
        change_url(link),
        {
            "_action": "assess",
            "assess-loaded_revision": "1",
            "assess-assessment_ref": "urn:eval:x",
            "assess-verdict": "supporting",
            "assess-reviewer_ref": "urn:reviewer:me",
            "assess-reviewer_kind": "human",
            "assess-method_ref": "urn:method:reading@1",
        },
    )
    assert "(role_required)" in response.content.decode()
    assert not Assessment.objects.filter(link=link).exists()


def test_structured_values_are_checked_against_the_shipped_schema(client, world, link):
    staff(world.curator)
    client.force_login(world.curator)
    html = client.get(change_url(link)).content.decode()
    assert 'data-schema="selector"' in html and 'data-schema="support_scope"' in html
    assert "grounding/json-editor.js" in html
    values = form_values(html)
    values.update(
        source_selector=json.dumps({"type": "TextQuoteSelector", "prefix": "x"}),
        revision_reason="bad selector",
    )
    response = client.post(change_url(link), values)
    page = response.content.decode()
    assert response.status_code == 200
    assert "/exact: &#x27;exact&#x27; is required (schema.required)" in page
    assert GroundingLink.objects.get(pk=link.pk).revision == 1


def test_the_live_check_answers_offenders_from_the_schema(client, world):
    staff(world.curator)
    client.force_login(world.curator)
    url = reverse("admin:grounding_validate_json", args=["support_scope"])
    bad = client.post(url, json.dumps({"limits": "x"}), content_type="application/json").json()
    assert bad == {
        "valid": False,
        "offenders": [
            {"pointer": "/covers", "code": "schema.required", "detail": "'covers' is required"}
        ],
    }
    good = client.post(url, json.dumps({"covers": "year"}), content_type="application/json")
    assert good.json() == {"valid": True, "offenders": []}
    broken = client.post(url, "{", content_type="application/json").json()
    assert broken["offenders"][0]["code"] == "json.parse"
    unknown = reverse("admin:grounding_validate_json", args=["nope"])
    assert client.post(unknown, "{}", content_type="application/json").status_code == 404
    assert client.get(url).status_code == 405


def test_the_changelist_shows_propositions(client, world, link):
    staff(world.curator)
    client.force_login(world.curator)
    html = client.get(reverse("admin:grounding_groundinglink_changelist")).content.decode()
    assert (
        '<td class="field-proposition"><span class="registry-clip" '
        'title="The bridge opened in 1932.">The bridge opened in 1932.</span></td>'
    ) in html
    assert "urn:answer:42#s3" not in html


def test_a_source_notification_subject_is_withheld_with_the_locator(client, world, link):
    notify(world)
    narrow_reviewer_decision(world, ["statement", "support", "passage.excerpt"])
    staff(world.reviewer)
    client.force_login(world.reviewer)
    html = client.get(change_url(link)).content.decode()
    section = html[html.index('id="notifications"') :]
    assert "urn:change:cms-1" in section
    assert world.passage.canonical_url not in html
    assert '<td><span class="registry-withheld">withheld</span></td>' in section


def test_a_disposed_row_shows_only_its_tombstone_state(client, world, link):
    services.dispose(
        actor=world.access_steward,
        grounding_id=link.pk,
        expected_revision=1,
        disposal={"receipt_ref": "urn:storage:receipt:1", "policy_ref": "urn:p:r"},
    )
    staff(world.curator)
    client.force_login(world.curator)
    html = client.get(reverse("admin:grounding_groundinglink_changelist")).content.decode()
    assert 'title="record state">record: disposed</span></td>' in html
    assert "The bridge opened in 1932." not in html
    assert '<td class="field-proposition"><span class="registry-withheld">withheld</span>' in html
