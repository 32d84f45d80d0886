"""The curator's change page and the link list in a real browser (Playwright driving
Debian's chromium against a live server). Screenshots go to test-artifacts/screenshots/."""

from __future__ import annotations

import os

import pytest
from django.urls import reverse

from grounding import services
from grounding.models import GroundingLink
from policies.choices import Role
from policies.models import DimensionMembership
from tests import factories
from tests.ui.test_admin_change_page import assess
from tests.ui.test_admin_changes import notify
from tests.ui.test_browser import CHROMIUM, login, shot, staff_curator
from tests.ui.test_pages import resolved

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed"
)
from tests.ui import test_browser as chromium  # noqa: E402

# The browser fixtures of the project's browser tests, shared.
browser = chromium.browser
new_page = chromium.new_page

pytestmark = [
    pytest.mark.urls("tests.ui.urls"),
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing"),
]


def change_url(live_server, link) -> str:
    return f"{live_server.url}{reverse('admin:grounding_groundinglink_change', args=[link.pk])}"


def curator_and_reviewer(world):
    """One staff user holding both roles, so every form of the page is offered."""
    user = staff_curator(world)
    DimensionMembership.objects.create(user=user, dimension=world.dimension, role=Role.REVIEWER)
    return user


def test_the_change_page_highlights_the_quote_and_explains_the_dispute(
    live_server, new_page, world, link
):
    resolved(world, link)
    assess(world, link, "supporting", assessment_ref="urn:eval:a")
    assess(world, link, "conflicting", assessment_ref="urn:eval:b")
    page = new_page()
    login(page, live_server, staff_curator(world))
    page.goto(change_url(live_server, link))
    mark = page.locator("#passage-text mark")
    assert mark.count() == 1 and mark.first.inner_text() == "opened in 1932"
    assert mark.first.is_visible()
    box = mark.first.bounding_box()
    assert box["width"] > 0 and box["height"] > 0
    background = mark.first.evaluate("m => getComputedStyle(m).backgroundColor")
    assert background == "rgb(255, 224, 102)"  # the registry's --mark colour
    assert page.inner_text("#proposition") == "The bridge opened in 1932."
    rows = page.locator("#assessments-table tbody tr")
    assert rows.count() == 2
    assert rows.nth(0).locator("td").nth(0).inner_text() == "supporting"
    assert rows.nth(1).locator("td").nth(0).inner_text() == "conflicting"
    assert "current" in rows.nth(1).inner_text()
    reason = page.inner_text("#display-reason")
    assert "disputed" in reason and "(conflicting, supporting)" in reason
    page.locator("#review").scroll_into_view_if_needed()
    shot(page, "admin-change-page-disputed")


def test_withdraw_from_the_change_page(live_server, new_page, world, link):
    page = new_page()
    login(page, live_server, staff_curator(world))
    page.goto(change_url(live_server, link))
    page.fill("#id_withdraw-reason", "the source was retracted")
    page.fill("#id_withdraw-authority_ref", "urn:decision:retraction-7")
    shot(page, "admin-change-page-withdraw-form")
    page.click("#withdraw-link-form input[type=submit]")
    page.wait_for_selector(".messagelist")
    assert "Withdrawn." in page.inner_text(".messagelist")
    assert "record: withdrawn" in page.inner_text("#content-main")
    assert page.locator("#withdraw-link-form").count() == 0
    link.refresh_from_db()
    assert (link.record_state, link.revision) == ("withdrawn", 2)
    shot(page, "admin-change-page-withdrawn")


def test_a_stale_withdrawal_is_refused_on_the_page_by_code(live_server, new_page, world, link):
    page = new_page()
    login(page, live_server, staff_curator(world))
    page.goto(change_url(live_server, link))
    resolved(world, link)  # someone else moves the link on after the page was loaded
    page.fill("#id_withdraw-reason", "retracted")
    page.fill("#id_withdraw-authority_ref", "urn:decision:r")
    page.click("#withdraw-link-form input[type=submit]")
    error = page.wait_for_selector("#withdraw-link-form .errorlist")
    assert "(revision_mismatch)" in error.inner_text()
    assert GroundingLink.objects.get(pk=link.pk).record_state == "candidate"


def test_assess_from_the_change_page(live_server, new_page, world, link):
    page = new_page()
    login(page, live_server, curator_and_reviewer(world))
    page.goto(change_url(live_server, link))
    page.fill("#id_assess-assessment_ref", "urn:eval:page/1")
    page.select_option("#id_assess-verdict", "supporting")
    page.fill("#id_assess-reviewer_ref", "urn:reviewer:me")
    page.fill("#id_assess-authority_ref", "urn:policy:review@1")
    page.click("#assess-form input[type=submit]")
    page.wait_for_selector(".messagelist")
    assert "Assessment urn:eval:page/1 bound." in page.inner_text(".messagelist")
    row = page.locator('#assessments-table tr[data-assessment="urn:eval:page/1"]')
    assert "(selected)" in row.inner_text()
    assert "display: visible" in page.inner_text("#display-reason")
    shot(page, "admin-change-page-assessed")


def test_the_json_editor_refuses_an_invalid_selector(live_server, new_page, world, link):
    page = new_page()
    login(page, live_server, staff_curator(world))
    page.goto(change_url(live_server, link))
    editor = page.locator("#id_source_selector")
    editor.fill('{"type": "TextQuoteSelector", "prefix": "The bridge "}')
    check = page.locator("#id_source_selector_check")
    check.locator("li").first.wait_for()
    assert check.inner_text().startswith("Refused by the schema selector:")
    assert "/exact: 'exact' is required (schema.required)" in check.inner_text()
    assert editor.evaluate("e => e.validity.valid") is False
    shot(page, "admin-json-editor-refused")
    page.fill("#id_revision_reason", "try a broken selector")
    page.click("input[name=_save]")
    page.wait_for_selector(".field-source_selector .errorlist")
    assert "(schema.required)" in page.inner_text(".field-source_selector .errorlist")
    assert GroundingLink.objects.get(pk=link.pk).revision == 1
    editor = page.locator("#id_source_selector")
    editor.fill('{"type": "TextQuoteSelector", "exact": "opened"}')
    page.wait_for_function(
        "() => document.getElementById('id_source_selector_check').textContent"
        ".startsWith('Valid against the schema selector')"
    )
    assert editor.evaluate("e => e.validity.valid") is True


def test_the_link_list_fits_1280_pixels(live_server, new_page, world):
    long_text = "The harbour bridge over the river opened to traffic in March 1932 " * 3
    for index in range(3):
        payload = factories.link_payload(world.dimension, world.profile, world.passage)
        payload["statement"]["claim_scope"] = {"proposition": long_text.strip()}
        payload["statement"]["statement_ref"] = f"urn:answer:{'x' * 120}#s{index}"
        services.register(actor=world.curator, payload=payload)
    # A long change_ref sends them all to review ("sent by" column).
    notify(world, change_ref="urn:change:" + "cms-republication-" * 6)
    page = new_page()  # 1280 × 900
    login(page, live_server, staff_curator(world))
    page.goto(f"{live_server.url}{reverse('admin:grounding_groundinglink_changelist')}")
    shot(page, "admin-link-list-1280")
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1] == 1280, widths
    # Django wraps the table in a scrolling .results box: nothing may scroll inside it.
    results = page.evaluate(
        "() => { const r = document.querySelector('#changelist .results');"
        " return [r.scrollWidth, r.clientWidth,"
        " document.querySelector('#result_list').getBoundingClientRect().right]; }"
    )
    assert results[0] <= results[1] and results[2] <= 1280, results
    cell = page.locator("td.field-proposition").first
    assert cell.inner_text().startswith("The harbour bridge")


def test_the_human_page_marks_the_quote_of_an_unobserved_link(live_server, new_page, world, link):
    page = new_page()
    login(page, live_server, staff_curator(world))
    page.goto(f"{live_server.url}{reverse('grounding-page', args=[link.pk])}")
    mark = page.locator("#passage-text mark")
    assert mark.count() == 1 and mark.first.inner_text() == "opened in 1932"
    assert mark.first.is_visible()
    assert "located the quote for this page only" in page.inner_text("#quote-preview")
    shot(page, "page-quote-located")
