"""Browser tests: Playwright driving Debian's chromium against a live server.

Skipped with a reason when chromium or the playwright package is missing
(`.ci/run` installs chromium). Screenshots go to test-artifacts/screenshots/.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from grounding import services
from grounding.models import GroundingLink
from tests import factories
from tests.ui.test_pages import ambiguous_link, resolved

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
PASSWORD = "correct horse battery"
SHOTS = Path(settings.BASE_DIR) / "test-artifacts" / "screenshots"

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed"
)
pytestmark = [
    pytest.mark.urls("tests.ui.urls"),
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not (os.path.exists(CHROMIUM) or shutil.which("chromium")),
        reason=f"{CHROMIUM} is missing (apt-get install -y chromium)",
    ),
]


@pytest.fixture(scope="module")
def browser():
    # Playwright's sync API runs an event loop in this thread; Django must allow the
    # test's own (synchronous) database calls beside it.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with playwright_api.sync_playwright() as p:
            chromium = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def new_page(browser):
    contexts = []

    def make():
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def staff_curator(world):
    world.curator.is_staff = True
    world.curator.set_password(PASSWORD)
    world.curator.save()
    return world.curator


def login(page, live_server, user) -> None:
    page.goto(f"{live_server.url}{reverse('admin:login')}")
    page.fill("#id_username", user.get_username())
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#user-tools")


def test_curator_finds_a_link_by_filter_and_edits_it(live_server, new_page, world, link):
    factories.register_link(
        world.curator,
        world.dimension,
        world.profile,
        world.passage,
        support={
            "support_kind": "paraphrase",
            "support_scope": {"covers": "the year"},
            "use_basis": "unknown",
        },
    )
    curator = staff_curator(world)
    page = new_page()
    login(page, live_server, curator)
    page.goto(f"{live_server.url}{reverse('admin:grounding_groundinglink_changelist')}")
    page.locator("#changelist-filter").get_by_role("link", name="quotation", exact=True).click()
    page.wait_for_url("**support_kind__exact=quotation**")
    rows = page.locator("#result_list tbody tr")
    assert rows.count() == 1
    assert "quotation" in rows.first.inner_text()
    shot(page, "admin-link-list-filtered")
    rows.first.locator("th a").click()
    page.wait_for_selector("#id_owner_ref")
    page.fill("#id_owner_ref", "urn:team:bridges")
    page.fill("#id_revision_reason", "owner handed over")
    shot(page, "admin-link-change-form")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist")
    assert "Saved as revision 2." in page.inner_text(".messagelist")
    link.refresh_from_db()
    assert (link.revision, link.owner_ref) == (2, "urn:team:bridges")


def test_a_second_session_gets_the_conflict_message(live_server, new_page, world, link):
    curator = staff_curator(world)
    first, second = new_page(), new_page()
    for page in (first, second):
        login(page, live_server, curator)
        page.goto(
            f"{live_server.url}{reverse('admin:grounding_groundinglink_change', args=[link.pk])}"
        )
    first.fill("#id_owner_ref", "urn:team:first")
    first.fill("#id_revision_reason", "first session")
    first.click("input[name=_save]")
    first.wait_for_selector(".messagelist")
    second.select_option("#id_support_kind", "paraphrase")
    second.fill("#id_revision_reason", "second session")
    second.click("input[name=_save]")
    alert = second.wait_for_selector("#conflict")
    text = alert.inner_text()
    assert "Conflict: this link changed since you loaded it" in text
    assert "revision 2" in text and "urn:team:first" in text
    assert second.input_value("#id_support_kind") == "paraphrase"
    assert second.input_value("#id_revision_reason") == "second session"
    shot(second, "admin-link-conflict")
    assert GroundingLink.objects.get(pk=link.pk).support_kind == "quotation"


def test_withdraw_action(live_server, new_page, world, link):
    curator = staff_curator(world)
    page = new_page()
    login(page, live_server, curator)
    page.goto(f"{live_server.url}{reverse('admin:grounding_groundinglink_changelist')}")
    page.check("#result_list tbody input.action-select")
    page.select_option("select[name=action]", "withdraw_links")
    page.click("button[name=index]")
    page.fill("#id_reason", "the source was retracted")
    page.fill("#id_authority_ref", "urn:decision:retraction-7")
    shot(page, "admin-withdraw-form")
    page.click("#withdraw-form input[type=submit]")
    page.wait_for_selector(".messagelist")
    assert "Withdrawn: 1 link(s)." in page.inner_text(".messagelist")
    link.refresh_from_db()
    assert link.record_state == "withdrawn"


def test_history_diff_page(live_server, new_page, world, link):
    services.revise(
        actor=world.curator,
        grounding_id=link.pk,
        expected_revision=1,
        changes={"owner_ref": "urn:team:b", "revision_reason": "handover"},
    )
    curator = staff_curator(world)
    page = new_page()
    login(page, live_server, curator)
    page.goto(
        f"{live_server.url}{reverse('admin:grounding_groundinglink_history', args=[link.pk])}"
    )
    assert "handover" in page.inner_text("#change-history")
    page.click("#compare-form input[type=submit]")
    table = page.wait_for_selector("#revision-diff")
    text = table.inner_text()
    assert "owner_ref" in text and "role:grounding-curator" in text and "urn:team:b" in text
    shot(page, "admin-history-diff")


def test_human_view_highlights_the_span_and_shows_ambiguity(live_server, new_page, world, link):
    resolved(world, link)
    other = ambiguous_link(world)
    curator = staff_curator(world)
    page = new_page()
    login(page, live_server, curator)
    page.goto(f"{live_server.url}{reverse('grounding-page', args=[link.pk])}")
    marks = page.locator("#passage-text mark")
    assert marks.count() == 1 and marks.first.inner_text() == "opened in 1932"
    shot(page, "page-resolved")
    page.goto(f"{live_server.url}{reverse('grounding-page', args=[other.pk])}")
    marks = page.locator("#passage-text mark")
    assert marks.all_inner_texts() == ["opened", "opened", "opened"]
    assert "Ambiguous anchor: 3 matches" in page.inner_text("#anchor-summary")
    shot(page, "page-ambiguous")
    page.set_viewport_size({"width": 420, "height": 900})
    shot(page, "page-ambiguous-narrow")


def test_script_in_a_passage_title_is_shown_as_text(live_server, new_page, world):
    passage = factories.make_passage(
        "The bridge opened in 1932. It spans the river.",
        title="<script>window.__pwned = 1</script>Bridge",
        dimension=world.dimension,
    )
    link = factories.register_link(world.curator, world.dimension, world.profile, passage)
    curator = staff_curator(world)
    page = new_page()
    login(page, live_server, curator)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{live_server.url}{reverse('grounding-page', args=[link.pk])}")
    title = page.inner_text(".passage-title")
    assert title == "<script>window.__pwned = 1</script>Bridge"
    assert page.evaluate("window.__pwned") is None
    assert all(url.startswith(live_server.url) for url in requests)
    shot(page, "page-escaped-title")
