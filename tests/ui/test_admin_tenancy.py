"""The admin obeys the same rules as the API (API.md "Admin", "Tenancy"): no history
revert form, history pages scoped like the changelist, policy rows shown to the roles
the API shows them to, profile actions through governance, titles through the reader.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib import admin
from django.core import checks
from django.urls import reverse

from common.web.admin_base import ANY, DisclosedAdmin
from evidence.models import RetrievalObservation
from evidence.services.wsp_import import import_wsp_document
from grounding import services
from grounding.models import Assessment, EvidenceSet, GroundingLink, StatementBinding
from policies import governance
from policies.choices import Role
from policies.models import (
    AuditEvent,
    Dimension,
    DimensionMembership,
    DisclosureDecision,
    Profile,
)
from tests import factories
from tests.api.helpers import restrict_curators_to
from tests.ui.test_admin import staff
from tests.ui.test_pages import narrow_reviewer_decision, resolved

pytestmark = pytest.mark.urls("tests.ui.urls")
FIXTURES = Path(__file__).resolve().parent.parent / "evidence" / "fixtures"


def admin_url(obj, view: str = "change", *extra) -> str:
    opts = obj._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=[obj.pk, *extra])


def history_form_url(obj, history_id) -> str:
    return admin_url(obj, "simple_history", history_id)


@pytest.fixture
def tenant_b(world):
    """Another Dimension, its link, and a staff user holding roles only there."""
    other = factories.make_dimension("tenant-b-zq")
    user = factories.user_with_roles(other, Role.REVIEWER, Role.CURATOR)
    staff(user)
    link = factories.register_link(
        user, other, world.profile, factories.make_passage(dimension=other)
    )
    return other, user, link


def _tracked_rows(world, link) -> list:
    """One row of every tracked model with an admin, most of them A's."""
    services.create_evidence_set(
        actor=world.curator,
        values={
            "evidence_set_ref": "urn:set:tenancy/1",
            "dimension": world.dimension.name,
            "members": [{"grounding_id": str(link.pk), "membership_role": "premise"}],
        },
    )
    rows = []
    for model in admin.site._registry:
        if not hasattr(model._meta, "simple_history_manager_attribute"):
            continue
        row = model._default_manager.order_by("pk").first()
        if model is GroundingLink:
            row = link
        if row is not None:
            rows.append(row)
    return rows


def test_no_model_has_a_history_revert_form(client, world, link, admin_user):
    """Not even for an operator: GET and POST of every tracked model's revert form are
    404, and nothing is written."""
    rows = _tracked_rows(world, link)
    assert {type(r).__name__ for r in rows} >= {
        "Dimension",
        "Profile",
        "DimensionMembership",
        "DisclosureDecision",
        "GroundingLink",
        "StatementBinding",
        "PassageBinding",
        "EvidenceSet",
        "EvidenceSetMembership",
        "Passage",
        "Source",
    }
    client.force_login(admin_user)
    events = AuditEvent.objects.count()
    for row in rows:
        version = row.history.order_by("history_id").first().history_id
        url = history_form_url(row, version)
        assert client.get(url).status_code == 404, url
        assert client.post(url, {"revision": 7, "name": "x"}).status_code == 404, url
    assert AuditEvent.objects.count() == events


def test_a_staff_user_of_another_dimension_cannot_revert_a_membership_into_steward(
    client, world, tenant_b
):
    _, intruder, _ = tenant_b
    membership = DimensionMembership.objects.get(user=world.curator, dimension=world.dimension)
    version = membership.history.get().history_id
    client.force_login(intruder)
    url = history_form_url(membership, version)
    assert client.get(url).status_code == 404
    events = AuditEvent.objects.count()
    response = client.post(
        url, {"user": intruder.pk, "dimension": world.dimension.pk, "role": Role.STEWARD}
    )
    assert response.status_code == 404
    membership.refresh_from_db()
    assert (membership.user_id, membership.role) == (world.curator.pk, Role.CURATOR)
    assert not DimensionMembership.objects.filter(user=intruder, dimension=world.dimension)
    assert AuditEvent.objects.count() == events


def test_history_pages_of_another_dimensions_rows_are_not_found(client, world, link, tenant_b):
    _, intruder, _ = tenant_b
    decision = DisclosureDecision.objects.filter(dimension=world.dimension).first()
    rows = [
        world.dimension,
        DimensionMembership.objects.get(user=world.curator, dimension=world.dimension),
        decision,
        link,
        StatementBinding.objects.get(link=link),
        world.passage,
        world.passage.source,
    ]
    client.force_login(intruder)
    for row in rows:
        response = client.get(admin_url(row, "history"))
        assert response.status_code == 404, (type(row).__name__, response.status_code)
        assert world.curator.username not in response.content.decode()
    # A's own steward reads A's membership history, without a revert link.
    staff(world.steward)
    client.force_login(world.steward)
    membership = rows[1]
    html = client.get(admin_url(membership, "history")).content.decode()
    assert "Created" in html and world.dimension.name in html
    assert "/history/" + str(membership.history.get().history_id) not in html


def test_link_history_links_to_the_compare_view_not_to_a_revert_form(client, world, link):
    services.revise(
        actor=world.curator,
        grounding_id=link.pk,
        expected_revision=1,
        changes={"owner_ref": "urn:team:b", "revision_reason": "handover"},
    )
    staff(world.curator)
    client.force_login(world.curator)
    html = client.get(admin_url(link, "history")).content.decode()
    compare = reverse("admin:grounding_link_compare", args=[link.pk])
    assert f'href="{compare}?from=1&amp;to=2"' in html
    for version in GroundingLink.history.filter(grounding_id=link.pk):
        assert f"/history/{version.history_id}/" not in html
        assert client.get(history_form_url(link, version.history_id)).status_code == 404


AUDIT = "admin:policies_auditevent_changelist"
DECISIONS = "admin:policies_disclosuredecision_changelist"
MEMBERSHIPS = "admin:policies_dimensionmembership_changelist"


@pytest.mark.parametrize(
    ("role", "audit", "decisions", "memberships"),
    [
        ("curator", 403, 403, 403),
        ("reviewer", 403, 403, 403),
        ("projection_agent", 403, 403, 403),
        ("steward", 200, 200, 200),
        ("access_steward", 200, 200, 200),
    ],
)
def test_audit_events_decisions_and_memberships_show_to_the_roles_the_api_shows_them_to(
    client, world, link, tenant_b, role, audit, decisions, memberships
):
    user = getattr(world, role)
    staff(user)
    client.force_login(user)
    statuses = [client.get(reverse(name)).status_code for name in (AUDIT, DECISIONS, MEMBERSHIPS)]
    assert statuses == [audit, decisions, memberships]
    if audit == 200:
        other, intruder, _ = tenant_b
        html = client.get(reverse(AUDIT)).content.decode()
        assert "register" in html and other.name not in html
        html = client.get(reverse(DECISIONS)).content.decode()
        assert world.dimension.name in html and other.name not in html
        html = client.get(reverse(MEMBERSHIPS)).content.decode()
        assert world.curator.username in html and intruder.username not in html


def test_a_steward_publishes_their_dimensions_profile_through_governance(client, world):
    draft = governance.create_profile(
        actor=world.steward,
        values={
            "name": "wm-mem-016",
            "version": "9.0.1",
            "support_vocabulary": ["quotation"],
            "selector_profiles": ["nfc-codepoint-halfopen@1"],
            "field_schemas": {},
            "mapping_profile_ref": "urn:grounding:mapping:web-annotation@1",
            "endpoint_role_map": {"statement": "target", "passage": "body"},
        },
        dimension=world.dimension,
    )
    staff(world.steward)
    client.force_login(world.steward)
    changelist = reverse("admin:policies_profile_changelist")
    response = client.post(
        changelist, {"action": "publish", "_selected_action": [draft.pk]}, follow=True
    )
    assert "Published: 1." in response.content.decode()
    draft.refresh_from_db()
    assert draft.status == "published"
    assert AuditEvent.objects.filter(action="publish_profile", outcome="applied").exists()


def test_a_shared_profile_is_retired_by_operators_only_and_the_refusal_is_shown(client, world):
    staff(world.steward)
    client.force_login(world.steward)
    changelist = reverse("admin:policies_profile_changelist")
    response = client.post(
        changelist, {"action": "retire", "_selected_action": [world.profile.pk]}, follow=True
    )
    # Django's message list capitalises the first letter of the profile's ref.
    html = response.content.decode().lower()
    assert f"{world.profile.ref}: refused (operator_required)" in html
    assert Profile.objects.get(pk=world.profile.pk).status == "published"
    refused = AuditEvent.objects.get(action="retire_profile", outcome="refused")
    assert refused.code == "operator_required"
    # A reviewer is offered no profile action at all.
    staff(world.reviewer)
    client.force_login(world.reviewer)
    client.post(changelist, {"action": "retire", "_selected_action": [world.profile.pk]})
    assert Profile.objects.get(pk=world.profile.pk).status == "published"
    assert AuditEvent.objects.filter(action="retire_profile").count() == 1


def test_an_assessment_title_does_not_show_its_withheld_verdict(client, world, link):
    assessment = factories.assess(world.reviewer, link)
    narrow_reviewer_decision(world, ["statement", "support", "assessments.reviewer"])
    staff(world.reviewer)
    client.force_login(world.reviewer)
    html = client.get(admin_url(assessment)).content.decode()
    assert assessment.assessment_ref in html
    assert "supporting" not in html
    listing = client.get(reverse("admin:grounding_assessment_changelist")).content.decode()
    assert assessment.assessment_ref in listing
    assert f"{assessment.assessment_ref}: supporting" not in listing
    assert str(Assessment.objects.get(pk=assessment.pk)) == assessment.assessment_ref


def test_every_registered_admin_of_the_project_declares_its_lookups():
    """Every ModelAdmin of the three apps is a DisclosedAdmin and passes its checks
    (what a later admin must declare to be registered at all)."""
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label in ("grounding", "evidence", "policies", "knox"):
            assert isinstance(model_admin, DisclosedAdmin), type(model_admin).__name__
    errors = [e for e in checks.run_checks(tags=[checks.Tags.admin]) if e.level >= checks.ERROR]
    assert errors == []


def test_an_undeclared_search_field_or_filter_fails_the_admin_check():
    class Careless(DisclosedAdmin):
        search_fields = ("name", "namespace")
        list_filter = ("is_active",)
        reveals = {"name": ANY}

    class Plain(DisclosedAdmin):
        # A plain relation filter would list every Dimension's users.
        list_filter = ("user",)
        reveals = {"user": ANY}

    site = admin.AdminSite(name="careless")
    codes = sorted(e.id for e in Careless(Dimension, site).check())
    assert codes == ["policies.A002", "policies.A004"]
    assert [e.id for e in Plain(DimensionMembership, site).check()] == ["policies.A005"]


def test_an_anchor_observation_shows_its_result_only_with_selector_and_excerpt(client, world, link):
    resolved(world, link)
    observation = link.anchor_observations.get()
    digest = observation.anchor_result["text_sha256"]
    staff(world.curator, world.reviewer)
    client.force_login(world.curator)
    assert digest in client.get(admin_url(observation)).content.decode()
    narrow_reviewer_decision(world, ["statement", "support", "passage.excerpt"])
    client.force_login(world.reviewer)
    html = client.get(admin_url(observation)).content.decode()
    assert digest not in html and "withheld" in html


def test_a_history_page_lists_versions_with_their_changes_for_the_dimension_only(
    client, world, link, tenant_b
):
    services.create_evidence_set(
        actor=world.curator,
        values={
            "evidence_set_ref": "urn:set:history/1",
            "dimension": world.dimension.name,
            "members": [{"grounding_id": str(link.pk), "membership_role": "premise"}],
        },
    )
    evidence_set = EvidenceSet.objects.get(evidence_set_ref="urn:set:history/1")
    services.change_evidence_set(
        actor=world.curator,
        evidence_set_ref=evidence_set.evidence_set_ref,
        expected_revision=1,
        declared_missing_members=["urn:answer:missing#s9"],
    )
    staff(world.curator)
    client.force_login(world.curator)
    html = client.get(admin_url(evidence_set, "history")).content.decode()
    assert "<strong>declared_missing_members</strong>: — &rarr;" in html
    assert "urn:answer:missing#s9" in html and "<strong>revision</strong>: 1 &rarr; 2" in html
    versions = html[html.index('id="change-history"') :]
    assert versions.count('<th scope="row">') == 2
    assert world.curator.username in html
    _, intruder, _ = tenant_b
    client.force_login(intruder)
    assert client.get(admin_url(evidence_set, "history")).status_code == 404


def test_an_import_report_naming_source_addresses_is_withheld_with_the_locator(client, world):
    document = json.loads((FIXTURES / "search.json").read_text())
    import_wsp_document(actor=world.curator, document=document, dimension=world.dimension.name)
    envelope = RetrievalObservation.objects.get(execution_id="exec-search-001")
    staff(world.curator)
    client.force_login(world.curator)
    assert "novelty_score" in client.get(admin_url(envelope)).content.decode()
    restrict_curators_to(world, ["statement", "support", "passage.title", "passage.excerpt"])
    html = client.get(admin_url(envelope)).content.decode()
    assert "novelty_score" not in html and "withheld" in html
