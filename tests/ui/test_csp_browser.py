"""The Content-Security-Policy holds in a real browser: the admin, a link page and
Swagger UI work under it and the browser reports no violation (Playwright driving
Debian's chromium against a live server with the project's own URLs)."""

from __future__ import annotations

import os

import pytest
from django.urls import reverse

from tests.ui.test_browser import CHROMIUM, login, shot, staff_curator

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed"
)
from tests.ui.test_browser import browser, new_page  # noqa: E402, F401  (fixtures)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing"),
]

# Recorded by the page itself before any of its scripts run.
_RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(e.violatedDirective + " " + (e.blockedURI || "inline"));
});
"""


def watched(page) -> list[str]:
    """Console messages about the policy, and responses without a policy header."""
    problems: list[str] = []
    page.add_init_script(_RECORD_VIOLATIONS)
    page.on(
        "console",
        lambda m: problems.append(m.text) if "Content Security Policy" in m.text else None,
    )

    def check(response) -> None:
        if "text/html" in (response.headers.get("content-type") or ""):
            policy = response.headers.get("content-security-policy") or ""
            if "script-src 'self'" not in policy:
                problems.append(f"no policy on {response.url}")

    page.on("response", check)
    return problems


def violations(page, problems: list[str]) -> list[str]:
    return problems + page.evaluate("window.__csp || []")


def test_the_admin_works_under_the_policy(live_server, new_page, world, link):  # noqa: F811
    curator = staff_curator(world)
    page = new_page()
    problems = watched(page)
    login(page, live_server, curator)
    page.goto(f"{live_server.url}{reverse('admin:grounding_groundinglink_changelist')}")
    page.locator("#changelist-filter").get_by_role("link", name="quotation", exact=True).click()
    page.wait_for_url("**support_kind__exact=quotation**")
    assert page.locator("#result_list tbody tr").count() == 1
    # The change form, its date/time and related-object widgets (admin JavaScript).
    page.locator("#result_list tbody tr").first.locator("th a").click()
    page.wait_for_selector("#id_owner_ref")
    page.fill("#id_owner_ref", "urn:team:csp")
    page.fill("#id_revision_reason", "policy check")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist")
    assert "Saved as revision 2." in page.inner_text(".messagelist")
    # The changelist's select-all checkbox is admin JavaScript (actions.js).
    page.goto(f"{live_server.url}{reverse('admin:grounding_groundinglink_changelist')}")
    page.check("#action-toggle")
    assert page.is_checked("#result_list tbody input.action-select")
    assert "1 of 1 selected" in page.inner_text(".action-counter")
    shot(page, "csp-admin")
    assert violations(page, problems) == []


def test_a_link_page_works_under_the_policy(live_server, new_page, world, link):  # noqa: F811
    curator = staff_curator(world)
    page = new_page()
    problems = watched(page)
    login(page, live_server, curator)
    page.goto(f"{live_server.url}{reverse('grounding-page', args=[link.pk])}")
    page.wait_for_selector(".passage-title")
    assert page.evaluate("getComputedStyle(document.body).fontFamily") != ""
    assert violations(page, problems) == []


def test_swagger_ui_renders_every_operation_under_the_policy(live_server, new_page, world):  # noqa: F811
    page = new_page()
    problems = watched(page)
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".swagger-ui .info .title", timeout=30_000)
    assert "Grounding-link registry API" in page.inner_text(".swagger-ui .info .title")
    page.wait_for_selector(".opblock", timeout=30_000)
    assert page.locator(".opblock").count() > 10
    # Expanding an operation renders its parameters and responses (React, no eval).
    page.locator(".opblock-summary").first.click()
    page.wait_for_selector(".opblock-body")
    shot(page, "csp-swagger-ui")
    assert violations(page, problems) == []
    # The page style moved out of the template still applies.
    assert page.evaluate("getComputedStyle(document.body).margin") == "0px"
