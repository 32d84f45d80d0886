"""The scenarios of issue 12, each a read or write that leaked before: evidence is
its Dimension's, internal recipients are reserved, existence is not disclosed, a
disposed link is a tombstone and its texts are purged everywhere."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from evidence.models import Passage, RetrievalObservation
from grounding import services
from policies.choices import Role
from tests import factories
from tests.api.helpers import client_for, if_match, problem, url

FIXTURES = Path(__file__).resolve().parent.parent / "evidence" / "fixtures"
PASSAGES = "/api/v1/evidence/passages/"
IMPORTS = "/api/v1/evidence/wsp-imports/"
SECRET = "sealed minutes of the harbour board"


def _search() -> dict:
    return json.loads((FIXTURES / "search.json").read_text())


@pytest.fixture
def other(world):
    """A second Dimension with its own curator and reviewer."""
    dimension = factories.make_dimension()
    return {
        "dimension": dimension,
        "curator": factories.user_with_roles(dimension, Role.CURATOR),
        "reviewer": factories.user_with_roles(dimension, Role.REVIEWER),
    }


@pytest.fixture
def secret_passage(world):
    return factories.make_passage(
        f"The {SECRET} record the bridge opened in 1932.", dimension=world.dimension
    )


def test_a_projection_agent_cannot_read_passage_text_by_id(world, secret_passage):
    client = client_for(world.projection_agent)
    problem(client.get(PASSAGES), 403, "role_required")
    response = client.get(f"{PASSAGES}{secret_passage.pk}/")
    problem(response, 403, "role_required")
    assert SECRET not in response.content.decode()


def test_a_reviewer_reads_passages_only_inside_links(world, secret_passage):
    response = client_for(world.reviewer).get(f"{PASSAGES}{secret_passage.pk}/")
    problem(response, 403, "role_required")


def test_another_dimensions_users_get_404_for_passages_that_exist(world, other, secret_passage):
    for user in (other["curator"], other["reviewer"]):
        response = client_for(user).get(f"{PASSAGES}{secret_passage.pk}/")
        body = problem(response, 404, "not_found")
        missing = problem(
            client_for(user).get(f"{PASSAGES}01900000-0000-7000-8000-000000000000/"),
            404,
            "not_found",
        )
        assert body == missing
    listed = client_for(other["curator"]).get(PASSAGES).json()["results"]
    assert listed == []


def test_curators_and_stewards_read_their_dimensions_passages(world, secret_passage):
    for user in (world.curator, world.steward, world.access_steward):
        body = client_for(user).get(f"{PASSAGES}{secret_passage.pk}/").json()
        assert SECRET in body["text"]
        assert body["dimension"] == world.dimension.name
        assert body["withheld"] == []


def test_a_revoked_internal_decision_withholds_passage_text(world, secret_passage):
    from policies import governance
    from policies.models import DisclosureDecision

    decision = DisclosureDecision.objects.get(
        dimension=world.dimension, recipient_scope="role:curator", internal=True
    )
    governance.revoke_disclosure_decision(actor=world.access_steward, decision=decision)
    response = client_for(world.curator).get(f"{PASSAGES}{secret_passage.pk}/")
    problem(response, 403, "disclosure_not_decided")
    assert client_for(world.curator).get(PASSAGES).json()["results"] == []


@pytest.mark.parametrize("role", ["steward", "curator", "reviewer"])
def test_a_projection_agent_cannot_choose_an_internal_recipient(world, role):
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    purpose = {"steward": "stewardship", "curator": "curation", "reviewer": "review"}[role]
    response = client_for(world.projection_agent).get(
        url(link.pk, "projection/"), {"recipient": f"role:{role}", "purpose": purpose}
    )
    body = problem(response, 403, "recipient_reserved")
    assert "opened in 1932" not in json.dumps(body)


def test_a_holder_of_the_role_may_project_for_it(world):
    both = factories.user_with_roles(world.dimension, Role.PROJECTION_AGENT, Role.STEWARD)
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    response = client_for(both).get(
        url(link.pk, "projection/"), {"recipient": "role:steward", "purpose": "stewardship"}
    )
    assert response.status_code == 200
    assert response.json()["withheld"] == []


def test_a_link_cannot_bind_another_dimensions_passage(world, other):
    foreign = factories.make_passage("Another Dimension's text.", dimension=other["dimension"])
    payload = factories.link_payload(world.dimension, world.profile, foreign)
    response = client_for(world.curator).post("/api/v1/groundings/", payload, format="json")
    body = problem(response, 400, "validation_error")
    assert [(o["pointer"], o["code"]) for o in body["offenders"]] == [
        ("/passage/passage_id", "unknown_reference")
    ]


def test_a_revision_cannot_rebind_to_another_dimensions_passage(world, other):
    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    foreign = factories.make_passage("Another Dimension's text.", dimension=other["dimension"])
    response = client_for(world.curator).patch(
        url(link.pk),
        {"passage": {"passage_id": str(foreign.pk)}, "revision_reason": "rebind"},
        format="json",
        **if_match(1),
    )
    body = problem(response, 400, "validation_error")
    assert [o["code"] for o in body["offenders"]] == ["unknown_reference"]


def test_a_disposed_link_is_a_tombstone_even_when_its_passage_is_shared(world):
    shared = factories.make_passage(
        f"Shared: the {SECRET} say it opened in 1932.",
        dimension=world.dimension,
        title="Harbour minutes",
    )
    live = factories.register_link(world.curator, world.dimension, world.profile, shared)
    gone = factories.register_link(world.curator, world.dimension, world.profile, shared)
    services.dispose(
        actor=world.access_steward,
        grounding_id=gone.pk,
        expected_revision=1,
        disposal={"receipt_ref": "urn:receipt:1", "policy_ref": "urn:policy:r"},
    )
    for user in (world.curator, world.steward, world.access_steward, world.reviewer):
        client = client_for(user)
        for suffix in ("", "revisions/", "revisions/1/", "revisions/2/"):
            text = client.get(url(gone.pk, suffix)).content.decode()
            assert SECRET not in text and "Harbour minutes" not in text, (user, suffix)
        page = client.get(f"/groundings/{gone.pk}/")
        assert SECRET not in page.content.decode()
    agent = client_for(world.projection_agent)
    projected = agent.get(
        url(gone.pk, "projection/"), {"recipient": "partner:acme", "purpose": "display"}
    ).json()
    assert projected["record_state"] == "disposed" and "fields" not in projected
    # The live link still reads the shared text.
    assert SECRET in client_for(world.curator).get(url(live.pk)).json()["passage"]["excerpt"]


def test_disposal_purges_an_unbound_duplicate_of_the_disposed_text(world):
    text = f"Only here: the {SECRET} record it."
    bound = factories.make_passage(text, dimension=world.dimension, title="Minutes 1")
    duplicate = factories.make_passage(text, dimension=world.dimension, title="Minutes 2")
    link = factories.register_link(world.curator, world.dimension, world.profile, bound)
    services.dispose(
        actor=world.access_steward,
        grounding_id=link.pk,
        expected_revision=1,
        disposal={"receipt_ref": "urn:receipt:2", "policy_ref": "urn:policy:r"},
    )
    for passage in (bound, duplicate):
        body = client_for(world.curator).get(f"{PASSAGES}{passage.pk}/").json()
        assert (body["text"], body["title"]) == (None, None)
        history = Passage.history.filter(passage_id=passage.pk)
        assert all(row.content_id is None and row.title is None for row in history)


def test_the_same_execution_imported_into_two_dimensions_is_two_imports(world, other):
    both = factories.user_with_roles(world.dimension, Role.CURATOR)
    factories.user_with_roles(other["dimension"], Role.CURATOR, username=both.username)
    client = client_for(both)
    document = _search()
    problem(client.post(IMPORTS, document, format="json"), 400, "dimension_required")
    first = client.post(f"{IMPORTS}?dimension={world.dimension.name}", document, format="json")
    second = client.post(f"{IMPORTS}?dimension={other['dimension'].name}", document, format="json")
    assert (first.status_code, second.status_code) == (201, 201)
    a, b = first.json(), second.json()
    # Nothing in the second report reveals what the first Dimension holds.
    assert a["observations"] == b["observations"]
    assert a["novelty_score"] == b["novelty_score"]
    assert [p["duplicate_of"] for p in b["passages"]] == [p["duplicate_of"] for p in a["passages"]]
    assert {p["passage_id"] for p in a["passages"]}.isdisjoint(
        p["passage_id"] for p in b["passages"]
    )
    replay = client.post(f"{IMPORTS}?dimension={other['dimension'].name}", document, format="json")
    assert (replay.status_code, replay.json()) == (200, b)
    assert RetrievalObservation.objects.filter(execution_id=document["execution_id"]).count() == 2


def test_importing_into_a_dimension_without_a_role_there_is_404(world, other):
    response = client_for(world.curator).post(
        f"{IMPORTS}?dimension={other['dimension'].name}", _search(), format="json"
    )
    problem(response, 404, "not_found")
    unknown = client_for(world.curator).post(
        f"{IMPORTS}?dimension=nowhere", _search(), format="json"
    )
    problem(unknown, 404, "not_found")
    assert not RetrievalObservation.objects.exists()


def test_a_changed_document_conflicts_only_within_its_dimension(world, other):
    document = _search()
    client_for(world.curator).post(IMPORTS, document, format="json")
    changed = copy.deepcopy(document)
    changed["request_id"] = "req-another"
    problem(
        client_for(world.curator).post(IMPORTS, changed, format="json"), 409, "execution_conflict"
    )
    # The other Dimension learns nothing of the first import: its own is simply new.
    response = client_for(other["curator"]).post(IMPORTS, changed, format="json")
    assert response.status_code == 201


def test_import_wsp_command_names_its_dimension(world, other, tmp_path, capsys):
    path = tmp_path / "search.json"
    path.write_text(json.dumps(_search()))
    call_command("import_wsp", str(path), "--user", world.curator.username)
    both = other["curator"]
    factories.user_with_roles(world.dimension, Role.CURATOR, username=both.username)
    with pytest.raises(CommandError, match="rejected"):
        call_command("import_wsp", str(path), "--user", both.username)
    assert "dimension_required" in capsys.readouterr().out
    call_command(
        "import_wsp", str(path), "--user", both.username, "--dimension", other["dimension"].name
    )
    dimensions = set(RetrievalObservation.objects.values_list("dimension__name", flat=True))
    assert dimensions == {world.dimension.name, other["dimension"].name}


def test_a_refused_read_is_audited_like_a_refused_write(world, secret_passage, client):
    from policies.models import AuditEvent

    link = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    problem(client_for(world.outsider).get(url(link.pk)), 404, "not_found")
    problem(client_for(world.projection_agent).get(url(link.pk)), 403, "disclosure_not_decided")
    problem(client_for(world.reviewer).get(f"{PASSAGES}{secret_passage.pk}/"), 403, "role_required")
    client.force_login(world.outsider)
    assert client.get(f"/groundings/{link.pk}/").status_code == 404
    refused = AuditEvent.objects.filter(outcome="refused").order_by("occurred_at")
    assert [(e.action, e.code, e.actor_ref) for e in refused] == [
        ("read", "not_found", f"user:{world.outsider.username}"),
        ("read", "disclosure_not_decided", f"user:{world.projection_agent.username}"),
        ("read_passage", "role_required", f"user:{world.reviewer.username}"),
        ("read", "not_found", f"user:{world.outsider.username}"),
    ]
    assert all(e.grounding_id in (link.pk, None) for e in refused)
