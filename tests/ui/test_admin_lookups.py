"""Search, list filters and URL lookups of the admin select a row only on values
disclosed to that reader for that row (API.md "Admin"): no changelist confirms a
guessed withheld value, undeclared lookups are refused, Dimension filters list the
reader's Dimensions only, and a disposed link is found only by its id.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.contenttypes.models import ContentType
from django.urls import reverse

from grounding import services
from grounding.models import Assessment, GroundingLink
from policies import governance
from policies.choices import DisclosableField as F
from policies.choices import Role
from policies.models import DisclosureDecision
from tests import factories
from tests.api.helpers import restrict_curators_to
from tests.ui.test_admin import staff
from tests.ui.test_admin_changes import notify

pytestmark = pytest.mark.urls("tests.ui.urls")
LINKS = "admin:grounding_groundinglink_changelist"
ASSESSMENTS = "admin:grounding_assessment_changelist"


def listed(html: str) -> list[str]:
    return re.findall(r'name="_selected_action" value="([^"]+)"', html)


def get(client, name: str, **params):
    return client.get(reverse(name), params)


@pytest.fixture
def withheld(world):
    """One link per withheld group: the reviewers read each under a decision covering
    every field but that one (their Dimension-wide internal decision revoked)."""
    internal = DisclosureDecision.objects.get(
        dimension=world.dimension, recipient_scope="role:reviewer", internal=True
    )
    governance.revoke_disclosure_decision(actor=world.access_steward, decision=internal)
    links = {}
    for n, group in enumerate((F.STATEMENT, F.PASSAGE_LOCATOR, F.ASSESSMENTS_VERDICT, F.SUPPORT)):
        passage = factories.make_passage(
            dimension=world.dimension, canonical_url=f"https://example.org/secret-{n}-locator"
        )
        statement = {
            **factories.BASE_PAYLOAD["statement"],
            "statement_ref": f"urn:answer:secret{n}#s1",
        }
        link = factories.register_link(
            world.curator, world.dimension, world.profile, passage, statement=statement
        )
        factories.assess(world.reviewer, link)
        governance.record_disclosure_decision(
            actor=world.access_steward,
            dimension=world.dimension,
            values={
                "decision_ref": f"urn:access:lookups:{n}",
                "recipient_scope": "role:reviewer",
                "purpose": "review",
                "fields": sorted(set(F.values) - {group}),
                "grounding_ids": [str(link.pk)],
            },
        )
        links[group] = GroundingLink.objects.get(pk=link.pk)
    staff(world.curator, world.reviewer)
    return links


def test_link_search_matches_only_on_values_disclosed_to_the_reader(client, world, withheld):
    statement, locator = withheld[F.STATEMENT], withheld[F.PASSAGE_LOCATOR]
    client.force_login(world.reviewer)
    assert str(statement.pk) not in listed(get(client, LINKS, q="secret0").content.decode())
    assert str(locator.pk) not in listed(get(client, LINKS, q="secret-1-loc").content.decode())
    # The same terms find the links where the reviewer is shown the group.
    assert listed(get(client, LINKS, q="secret2").content.decode()) == [
        str(withheld[F.ASSESSMENTS_VERDICT].pk)
    ]
    client.force_login(world.curator)
    assert listed(get(client, LINKS, q="secret0").content.decode()) == [str(statement.pk)]
    assert listed(get(client, LINKS, q="secret-1-loc").content.decode()) == [str(locator.pk)]


def test_record_searches_and_filters_match_only_disclosed_values(client, world, withheld):
    client.force_login(world.reviewer)
    bindings = "admin:grounding_statementbinding_changelist"
    assert "0 statement bindings" in get(client, bindings, q="secret0").content.decode()
    assert "1 statement binding" in get(client, bindings, q="secret2").content.decode()
    passages = "admin:grounding_passagebinding_changelist"
    assert "0 passage bindings" in get(client, passages, q="secret-1-loc").content.decode()
    # A filter on a withheld verdict leaves that link's assessment out.
    verdict = withheld[F.ASSESSMENTS_VERDICT]
    html = get(client, ASSESSMENTS, verdict__exact="supporting").content.decode()
    rows = re.findall(r'href="/admin/grounding/assessment/([^/]+)/change/', html)
    links = set(Assessment.objects.filter(pk__in=rows).values_list("link_id", flat=True))
    assert verdict.pk not in links and len(links) == 3
    support = withheld[F.SUPPORT]
    ids = listed(get(client, LINKS, support_kind__exact="quotation").content.decode())
    assert str(support.pk) not in ids and len(ids) == 3
    client.force_login(world.curator)
    ids = listed(get(client, LINKS, support_kind__exact="quotation").content.decode())
    assert str(support.pk) in ids and len(ids) == 4
    html = get(client, ASSESSMENTS, verdict__exact="supporting").content.decode()
    assert len(set(re.findall(r'href="/admin/grounding/assessment/([^/]+)/change/', html))) == 4


@pytest.mark.parametrize(
    ("changelist", "lookup"),
    [
        (LINKS, {"displayed_verdict": "supporting"}),
        (LINKS, {"current_statement__claim_scope__proposition__icontains": "bridge"}),
        (
            "admin:grounding_statementbinding_changelist",
            {"claim_scope__proposition__icontains": "b"},
        ),
        ("admin:grounding_passagebinding_changelist", {"source_selector__exact__icontains": "o"}),
        ("admin:grounding_assessment_changelist", {"verdict": "supporting"}),
        ("admin:evidence_passage_changelist", {"title__icontains": "Bridge"}),
        ("admin:grounding_changenotification_changelist", {"subject_ref__icontains": "http"}),
    ],
)
def test_lookups_outside_the_declared_filters_are_refused(client, world, link, changelist, lookup):
    factories.assess(world.reviewer, link)
    notify(world)
    staff(world.curator)
    client.force_login(world.curator)
    response = client.get(reverse(changelist), lookup)
    assert response.status_code == 400
    assert "bridge" not in response.content.decode().lower()


def test_the_review_queue_lookup_stays_declared(client, world, link):
    notification = notify(world)
    staff(world.curator)
    client.force_login(world.curator)
    params = {"change_ref": notification.change_ref, "dimension__id__exact": world.dimension.pk}
    assert listed(get(client, LINKS, **params).content.decode()) == [str(link.pk)]


def test_dimension_filters_list_only_the_readers_dimensions(client, world, link):
    other = factories.make_dimension("zz-other-tenant")
    other_user = factories.user_with_roles(other, Role.CURATOR, Role.STEWARD)
    factories.register_link(other_user, other, world.profile)
    # A second Dimension of the readers' own, so each filter has choices to list.
    second = factories.make_dimension("yy-second-own")
    for user, role in ((world.curator, Role.CURATOR), (world.steward, Role.STEWARD)):
        governance.grant_role(actor=None, dimension=second, user=user, role=role)
    factories.assess(world.reviewer, link)
    staff(world.curator, world.steward, world.access_steward)
    pages = {
        world.curator: [
            LINKS,
            "admin:grounding_assessment_changelist",
            "admin:grounding_statementbinding_changelist",
            "admin:evidence_passage_changelist",
        ],
        world.steward: [
            "admin:policies_dimensionmembership_changelist",
            "admin:policies_disclosuredecision_changelist",
            "admin:policies_profile_changelist",
        ],
    }
    for user, names in pages.items():
        client.force_login(user)
        for name in names:
            html = get(client, name).content.decode()
            assert "zz-other-tenant" not in html, name
            assert f"dimension__id__exact={world.dimension.pk}" in html, name
            assert f"dimension__id__exact={second.pk}" in html, name


def test_a_disposed_link_is_found_only_by_its_id(client, world):
    link = factories.register_link(
        world.curator, world.dimension, world.profile, world.passage, master_ref="urn:master:g-1"
    )
    live = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    notify(world)
    link.refresh_from_db()
    services.dispose(
        actor=world.access_steward,
        grounding_id=link.pk,
        expected_revision=link.revision,
        disposal={"receipt_ref": "urn:storage:receipt:g-1", "policy_ref": "urn:p:r"},
    )
    staff(world.curator)
    client.force_login(world.curator)
    gone = str(link.pk)
    assert listed(get(client, LINKS, q=gone).content.decode()) == [gone]
    assert listed(get(client, LINKS, record_state__exact="disposed").content.decode()) == [gone]
    for params in (
        {"q": "urn:master:g-1"},
        {"q": world.passage.passage_ref},
        {"q": "urn:answer:42#s3"},
        {"recheck_state__exact": "pending_review"},
        {"support_kind__exact": "quotation"},
        {"change_ref": "urn:change:cms-1"},
        {"resolution_state__exact": "unattempted"},
    ):
        ids = listed(get(client, LINKS, **params).content.decode())
        assert gone not in ids, params
    assert str(live.pk) in listed(get(client, LINKS, q=world.passage.passage_ref).content.decode())
    # Its row shows no change_ref (the tombstone has none).
    html = get(client, LINKS, q=gone).content.decode()
    assert "urn:change:cms-1" not in html


def test_notification_subjects_show_and_match_only_where_the_reader_sees_them(client, world, link):
    notify(world)
    notify(world, change_ref="urn:change:ans-1", kind="answer", subject_ref="urn:answer:42@2")
    staff(world.curator, world.reviewer, world.steward)
    listing = "admin:grounding_changenotification_changelist"
    client.force_login(world.steward)
    html = get(client, listing).content.decode()
    assert world.passage.canonical_url in html and "urn:answer:42@2" in html
    assert (
        "urn:change:cms-1"
        in get(client, listing, q=world.passage.canonical_url[8:]).content.decode()
    )
    # Curators reading under a decision without locators and statements: withheld.
    restrict_curators_to(world, ["support", "passage.title", "passage.excerpt"])
    client.force_login(world.curator)
    html = get(client, listing).content.decode()
    assert world.passage.canonical_url not in html and "urn:answer:42@2" not in html
    assert html.count('<span class="registry-withheld">withheld</span>') == 2
    assert "0 change notifications" in get(client, listing, q="example.org").content.decode()
    assert "0 change notifications" in get(client, listing, q="answer:42").content.decode()
    notification = world.dimension.change_notifications.get(change_ref="urn:change:cms-1")
    page = client.get(reverse("admin:grounding_changenotification_change", args=[notification.pk]))
    assert page.status_code == 200 and world.passage.canonical_url not in page.content.decode()
    # Reviewers do not read notifications, as in the API.
    client.force_login(world.reviewer)
    assert get(client, listing).status_code == 403


def test_autocomplete_and_popups_answer_only_disclosed_rows(client, world, withheld):
    client.force_login(world.reviewer)
    url = reverse("admin:autocomplete")
    params = {"app_label": "grounding", "model_name": "assessment", "field_name": "link"}
    found = client.get(url, {**params, "term": "secret0"}).json()["results"]
    assert found == []
    found = client.get(url, {**params, "term": "secret2"}).json()["results"]
    verdict = withheld[F.ASSESSMENTS_VERDICT]
    assert found == [{"id": str(verdict.pk), "text": f"{verdict.pk}@{verdict.revision}"}]
    response = get(client, LINKS, _popup="1", _to_field="master_ref")
    assert response.status_code == 400


def test_the_view_on_site_shortcut_answers_alike_for_every_link(client, world, link):
    other = factories.make_dimension()
    hidden = factories.register_link(
        factories.user_with_roles(other, Role.CURATOR), other, world.profile
    )
    staff(world.curator)
    client.force_login(world.curator)
    content_type = ContentType.objects.get_for_model(GroundingLink).pk
    answers = {
        str(key): client.get(f"/admin/r/{content_type}/{key}/")
        for key in (link.pk, hidden.pk, "0190f2a4-0000-7000-8000-000000000000")
    }
    assert {r.status_code for r in answers.values()} == {404}
    assert len({r.content for r in answers.values()}) == 1


def test_a_restricted_sources_locator_matches_only_under_a_restricted_decision(client, world):
    """Reviewers' internal decision does not name restricted sources: a restricted
    passage's locator is theirs neither to see nor to search by."""
    passage = factories.make_passage(
        dimension=world.dimension,
        access_label="restricted",
        canonical_url="https://example.org/closed-archive-7",
    )
    link = factories.register_link(world.curator, world.dimension, world.profile, passage)
    staff(world.curator, world.reviewer)
    client.force_login(world.reviewer)
    assert listed(get(client, LINKS, q="closed-archive").content.decode()) == []
    bindings = "admin:grounding_passagebinding_changelist"
    assert "0 passage bindings" in get(client, bindings, q="closed-archive").content.decode()
    client.force_login(world.curator)
    assert listed(get(client, LINKS, q="closed-archive").content.decode()) == [str(link.pk)]
