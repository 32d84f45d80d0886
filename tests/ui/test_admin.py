"""The curator admin through the Django test client."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.apps import apps
from django.contrib import admin
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grounding import services
from grounding.models import Assessment, GroundingLink
from policies.choices import Role
from policies.models import AuditEvent
from tests import factories
from tests.ui.test_pages import ambiguous_link, narrow_reviewer_decision

pytestmark = pytest.mark.urls("tests.ui.urls")
FIXTURES = Path(__file__).resolve().parent.parent / "evidence" / "fixtures"
CHANGELIST = "admin:grounding_groundinglink_changelist"


def staff(*users):
    for user in users:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    return users[0]


def change_url(link) -> str:
    return reverse("admin:grounding_groundinglink_change", args=[link.pk])


def form_values(html: str) -> dict[str, str]:
    """The link change form's current values as a browser would post them."""
    if 'id="groundinglink_form"' in html:  # the revise form only, not the action forms
        html = html[html.index('id="groundinglink_form"') :]
    values = dict(re.findall(r'<input type="(?:hidden|text)" name="(\w+)" value="([^"]*)"', html))
    for name, body in re.findall(r'<textarea name="(\w+)"[^>]*>\n?(.*?)</textarea>', html, re.S):
        values[name] = body.replace("&quot;", '"')
    for name, options in re.findall(r'<select name="(\w+)"[^>]*>(.*?)</select>', html, re.S):
        chosen = re.search(r'<option value="([^"]*)" selected>', options)
        values[name] = chosen.group(1) if chosen else ""
    values.pop("csrfmiddlewaretoken", None)
    return values


# Operational rows, not records anyone curates or reads: request counters and the
# stored first answers of idempotent retries.
OPERATIONAL = {"ThrottleCounter", "IdempotencyKey"}


def test_every_model_is_registered():
    for label in ("grounding", "evidence", "policies"):
        for model in apps.get_app_config(label).get_models():
            if model.__name__.startswith("Historical") or model.__name__ in OPERATIONAL:
                continue
            assert admin.site.is_registered(model), model.__name__


def test_the_link_list_makes_a_constant_number_of_queries(
    client, world, django_assert_max_num_queries
):
    staff(world.curator)
    client.force_login(world.curator)
    for _ in range(2):
        factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    with CaptureQueriesContext(connection) as two:
        assert client.get(reverse(CHANGELIST)).status_code == 200
    for _ in range(18):
        factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    with django_assert_max_num_queries(len(two.captured_queries)):
        response = client.get(reverse(CHANGELIST))
    assert response.content.decode().count('class="action-checkbox"') == 20


def test_list_filters_and_search_find_a_link(client, world, link):
    staff(world.curator)
    client.force_login(world.curator)
    other = factories.register_link(
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
    # The parameter the support_kind list filter produces (no other lookup is accepted).
    html = client.get(reverse(CHANGELIST), {"support_kind__exact": "paraphrase"}).content.decode()
    assert str(other.pk)[:13] in html and str(link.pk)[:13] not in html
    html = client.get(reverse(CHANGELIST), {"q": world.passage.passage_ref}).content.decode()
    assert str(other.pk)[:13] in html and str(link.pk)[:13] in html


def test_saving_the_form_calls_revise_and_is_audited(client, world, link):
    staff(world.curator)
    client.force_login(world.curator)
    values = form_values(client.get(change_url(link)).content.decode())
    assert values["loaded_revision"] == "1"
    values.update(owner_ref="urn:team:b", revision_reason="handover")
    response = client.post(change_url(link), values)
    assert response.status_code == 302
    link.refresh_from_db()
    assert (link.revision, link.owner_ref, link.revision_reason) == (2, "urn:team:b", "handover")
    event = AuditEvent.objects.filter(action="revise", grounding_id=link.pk).get()
    assert (event.outcome, event.expected_revision, event.resulting_revision) == ("applied", 1, 2)


def test_a_stale_form_shows_the_conflict_and_keeps_the_input(client, world, link):
    staff(world.curator)
    client.force_login(world.curator)
    values = form_values(client.get(change_url(link)).content.decode())
    # Another curator revises the link after the form was loaded.
    services.revise(
        actor=world.curator,
        grounding_id=link.pk,
        expected_revision=1,
        changes={"owner_ref": "urn:team:other", "revision_reason": "other session"},
    )
    values.update(support_kind="paraphrase", revision_reason="my edit")
    response = client.post(change_url(link), values)
    html = response.content.decode()
    assert response.status_code == 200
    assert "Conflict: this link changed since you loaded it" in html
    assert "the link is now at <strong>revision 2</strong>" in html
    assert re.search(
        r"<code>owner_ref</code></th><td class=\"old\">role:grounding-curator</td>"
        r"<td class=\"new\">urn:team:other</td>",
        html,
    )
    kept = form_values(html)
    assert kept["support_kind"] == "paraphrase"  # the curator's edit is kept
    assert kept["revision_reason"] == "my edit"
    assert kept["owner_ref"] == "urn:team:other"  # untouched fields move on
    assert kept["loaded_revision"] == "2"
    link.refresh_from_db()
    assert (link.revision, link.support_kind) == (2, "quotation")  # nothing overwritten
    assert AuditEvent.objects.filter(action="revise", code="revision_mismatch").exists()
    # Saving the reviewed form again applies the edit on top of revision 2.
    assert client.post(change_url(link), kept).status_code == 302
    link.refresh_from_db()
    assert (link.revision, link.support_kind, link.owner_ref) == (3, "paraphrase", "urn:team:other")


def test_a_refused_revision_shows_its_offenders_on_the_form(client, world, link):
    staff(world.curator)
    client.force_login(world.curator)
    values = form_values(client.get(change_url(link)).content.decode())
    values.update(use_basis="generation_input", revision_reason="no evidence")
    html = client.post(change_url(link), values).content.decode()
    assert 'class="errorlist' in html
    assert GroundingLink.objects.get(pk=link.pk).revision == 1


def post_action(client, action, links, **extra):
    data = {"action": action, "_selected_action": [str(x.pk) for x in links], **extra}
    return client.post(reverse(CHANGELIST), data)


def test_withdraw_action_asks_for_a_reason_then_calls_the_service(client, world, link):
    staff(world.curator)
    client.force_login(world.curator)
    page = post_action(client, "withdraw_links", [link])
    assert page.status_code == 200 and "Withdraw grounding links" in page.content.decode()
    done = post_action(
        client,
        "withdraw_links",
        [link],
        apply="1",
        reason="source retracted",
        authority_ref="urn:decision:7",
    )
    assert done.status_code == 302
    link.refresh_from_db()
    assert link.record_state == "withdrawn" and link.withdrawal.reason == "source retracted"
    assert AuditEvent.objects.filter(action="withdraw", outcome="applied").count() == 1


def test_recheck_and_resolver_actions_call_the_services(client, world, link):
    staff(world.curator)
    client.force_login(world.curator)
    post_action(client, "run_builtin_resolver", [link])
    link.refresh_from_db()
    assert (link.resolution_state, link.revision) == ("resolved", 2)
    post_action(client, "mark_for_recheck", [link])
    link.refresh_from_db()
    assert (link.recheck_state, link.revision) == ("pending_review", 3)
    actions = set(AuditEvent.objects.filter(grounding_id=link.pk).values_list("action", flat=True))
    assert {"record_anchor_observation", "revise"} <= actions


@pytest.mark.parametrize("model", [Assessment, "anchorobservation", AuditEvent])
def test_records_and_audit_events_are_read_only(client, world, model, admin_user):
    model = model if not isinstance(model, str) else apps.get_model("grounding", model)
    model_admin = admin.site._registry[model]
    staff(world.curator)
    for user in (world.curator, admin_user):
        client.force_login(user)
        request = type("R", (), {"user": user})()
        assert not model_admin.has_add_permission(request)
        assert not model_admin.has_change_permission(request)
        assert not model_admin.has_delete_permission(request)
        opts = model._meta
        assert client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_add")).status_code in (
            403,
            404,
        )


def test_a_curator_sees_only_links_of_their_dimensions(client, world, link):
    other_dim = factories.make_dimension()
    other_curator = factories.user_with_roles(other_dim, Role.CURATOR)
    hidden = factories.register_link(other_curator, other_dim, world.profile)
    staff(world.curator)
    client.force_login(world.curator)
    html = client.get(reverse(CHANGELIST)).content.decode()
    assert str(link.pk)[:13] in html and str(hidden.pk)[:13] not in html
    assert client.get(change_url(hidden)).status_code == 404


def test_withheld_fields_show_as_withheld_in_the_admin(client, world, link):
    narrow_reviewer_decision(world, ["support"])
    staff(world.reviewer)
    client.force_login(world.reviewer)
    html = client.get(reverse(CHANGELIST)).content.decode()
    withheld = '<span class="registry-withheld">withheld</span>'
    assert f'<td class="field-proposition">{withheld}</td>' in html
    assert '<td class="field-support">quotation</td>' in html
    page = client.get(change_url(link)).content.decode()
    assert "<code>statement</code>: <span" in page and "registry-withheld" in page
    assert "Save revision" not in page  # a reviewer may view, not revise


def test_the_history_diff_names_each_changed_field(client, world, link):
    services.revise(
        actor=world.curator,
        grounding_id=link.pk,
        expected_revision=1,
        changes={
            "owner_ref": "urn:team:b",
            "statement": {"statement_ref": "urn:answer:42#s4"},
            "revision_reason": "rebind",
        },
    )
    staff(world.curator)
    client.force_login(world.curator)
    history = client.get(reverse("admin:grounding_groundinglink_history", args=[link.pk]))
    assert "rebind" in history.content.decode()
    url = reverse("admin:grounding_link_compare", args=[link.pk])
    html = client.get(url, {"from": 1, "to": 2}).content.decode()
    assert "<code>owner_ref</code>" in html and "urn:team:b" in html
    assert "<code>statement.statement_ref</code>" in html and "urn:answer:42#s4" in html


def test_wsp_import_page_reports_the_import_and_every_offender(client, world):
    staff(world.curator)
    client.force_login(world.curator)
    url = reverse("admin:evidence_wsp_import")
    good = (FIXTURES / "search.json").read_bytes()
    response = client.post(
        url,
        {"dimension": world.dimension.name, "document": SimpleUploadedFile("search.json", good)},
    )
    html = response.content.decode()
    assert "search.json: imported" in html and "exec-search-001" in html
    broken = json.loads(good)
    broken["contract_version"] = "2.0"
    del broken["capability"]
    lines = json.dumps(broken) + "\n" + "{not json\n"
    response = client.post(
        url,
        {
            "dimension": world.dimension.name,
            "document": SimpleUploadedFile("batch.jsonl", lines.encode()),
        },
    )
    html = response.content.decode()
    assert "line 1: rejected (wsp_contract_violation)" in html
    assert "<code>/contract_version</code>" in html and "<code>/capability</code>" in html
    assert "line 2: rejected (invalid_json)" in html


def test_wsp_import_needs_the_curator_role(client, world):
    staff(world.reviewer)
    client.force_login(world.reviewer)
    assert client.get(reverse("admin:evidence_wsp_import")).status_code == 403


def test_an_ambiguous_link_change_page_renders(client, world):
    link = ambiguous_link(world)
    staff(world.curator)
    client.force_login(world.curator)
    html = client.get(change_url(link)).content.decode()
    assert "anchor: ambiguous" in html
