"""A source's access label (and its history) belongs to one Dimension (API.md
"Tenancy": the source access label is a Dimension's resource).

The same canonical URL imported into two Dimensions is two source rows: one
Dimension labelling its source restricted restricts its own passages only, and a
source's history names only its own Dimension's users. evidence 0004 splits the
sources existing rows shared.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import IntegrityError, transaction

from evidence.models import Passage, Source
from evidence.services.wsp_import import import_wsp_document
from grounding.management.demo_data import DOCUMENTS, demo_wsp_response
from policies.choices import Role
from tests import factories
from tests.api.helpers import client_for
from tests.evidence.test_migration_dimension import _dimension, _history, _latest, _migrate

URL = DOCUMENTS[0][0]
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _response(execution_id: str) -> dict:
    document = demo_wsp_response()
    document["execution_id"] = execution_id
    return document


def _source_of(dimension) -> Source:
    """The source of the Dimension's first passage of URL (its first import)."""
    first = Passage.objects.filter(dimension=dimension, canonical_url=URL).order_by("created_at")
    return first.first().source


def _label(source: Source, label: str, *, by) -> None:
    """A label change as every tracked change is made: saved with its history row."""
    source.access_label = label
    source._history_user = by
    source._change_reason = "labelled by the Dimension's steward"
    source.save()


@pytest.fixture
def tenants(db):
    first, second = factories.make_dimension(), factories.make_dimension()
    return (
        (first, factories.user_with_roles(first, Role.CURATOR, Role.STEWARD)),
        (second, factories.user_with_roles(second, Role.CURATOR, Role.STEWARD)),
    )


def test_one_dimensions_restricted_label_does_not_restrict_anothers_import(tenants):
    (first, first_curator), (second, second_curator) = tenants
    import_wsp_document(actor=first_curator, document=_response("exec-1"), dimension=first)
    _label(_source_of(first), "restricted", by=first_curator)

    import_wsp_document(actor=second_curator, document=_response("exec-2"), dimension=second)
    import_wsp_document(actor=first_curator, document=_response("exec-3"), dimension=first)

    theirs = Passage.objects.get(dimension=second, canonical_url=URL)
    assert theirs.access_label == "public"
    assert theirs.source.access_label == "public"
    assert theirs.source_id != _source_of(first).source_id
    # The labelling Dimension's own later import is restricted by its label.
    later = Passage.objects.get(dimension=first, execution_id="exec-3", canonical_url=URL)
    assert (later.access_label, later.source_id) == ("restricted", _source_of(first).source_id)
    # Read through the API, the second Dimension's steward is shown everything.
    body = client_for(second_curator).get(f"/api/v1/evidence/passages/{theirs.passage_id}/")
    assert body.status_code == 200
    assert (body.json()["access_label"], body.json()["withheld"]) == ("public", [])


def test_a_sources_history_names_only_its_own_dimensions_users(tenants):
    (first, first_curator), (second, second_curator) = tenants
    import_wsp_document(actor=first_curator, document=_response("exec-1"), dimension=first)
    _label(_source_of(first), "restricted", by=first_curator)
    import_wsp_document(actor=second_curator, document=_response("exec-2"), dimension=second)

    for dimension, curator in tenants:
        source = _source_of(dimension)
        assert source.dimension_id == dimension.pk
        users = set(Source.history.filter(source_id=source.pk).values_list("history_user_id"))
        assert users == {(curator.pk,)}, dimension.name
        assert set(
            Source.history.filter(source_id=source.pk).values_list("dimension_id", flat=True)
        ) == {dimension.pk}


def test_a_url_names_one_source_per_dimension(tenants):
    (first, _), (second, _) = tenants
    Source.objects.create(dimension=first, canonical_url="https://example.org/one")
    Source.objects.create(dimension=second, canonical_url="https://example.org/one")
    with pytest.raises(IntegrityError), transaction.atomic():
        Source.objects.create(dimension=first, canonical_url="https://example.org/one")


BEFORE = ("evidence", "0003_evidence_belongs_to_a_dimension")


def _before() -> list[tuple[str, str]]:
    return [node for node in _latest() if node[0] != "evidence"] + [BEFORE]


@pytest.mark.django_db(transaction=True)
def test_migration_gives_each_dimension_its_own_copy_of_a_shared_source():
    try:
        old = _migrate(_before())
        User = old.get_model("auth.User")
        Membership = old.get_model("policies.DimensionMembership")
        alpha, beta, gamma = (_dimension(old, n) for n in ("alpha", "beta", "gamma"))
        importer = User.objects.create(username="importer")
        Membership.objects.create(user=importer, dimension=gamma, role="curator")
        OldSource = old.get_model("evidence.Source")
        shared = OldSource.objects.create(
            canonical_url="https://example.org/shared",
            host="example.org",
            access_label="restricted",
        )
        _history(old, "evidence.Source", shared, history_date=T0, history_user_id=importer.pk)
        lonely = OldSource.objects.create(canonical_url="https://example.org/lonely")
        _history(old, "evidence.Source", lonely, history_date=T0, history_user_id=importer.pk)
        content = old.get_model("evidence.Content").objects.create(
            sha256="c" * 64, text="text", length=4
        )
        OldPassage = old.get_model("evidence.Passage")
        made = {}
        for ref, dimension in (("urn:p:a1", alpha), ("urn:p:b1", beta), ("urn:p:a2", alpha)):
            passage = OldPassage.objects.create(
                dimension=dimension,
                passage_ref=ref,
                source=shared,
                content=content,
                content_sha256=content.sha256,
                kind="search_result",
            )
            _history(old, "evidence.Passage", passage, history_date=passage.created_at)
            made[ref] = passage

        new = _migrate(_latest())
        Source_ = new.get_model("evidence.Source")
        HistoricalSource = new.get_model("evidence.HistoricalSource")
        Passage_ = new.get_model("evidence.Passage")
        HistoricalPassage = new.get_model("evidence.HistoricalPassage")

        # The original stays with the Dimension of its earliest passage, history too.
        original = Source_.objects.get(pk=shared.pk)
        assert original.dimension_id == alpha.pk
        assert list(
            HistoricalSource.objects.filter(source_id=shared.pk).values_list(
                "dimension_id", "history_user_id"
            )
        ) == [(alpha.pk, importer.pk)]
        # beta gets a copy: same URL, host and label, its own history row (no user).
        copy = Source_.objects.get(dimension_id=beta.pk, canonical_url="https://example.org/shared")
        assert copy.pk != shared.pk
        assert (copy.host, copy.access_label, copy.created_at) == (
            "example.org",
            "restricted",
            shared.created_at,
        )
        (copy_history,) = HistoricalSource.objects.filter(source_id=copy.pk)
        assert (copy_history.dimension_id, copy_history.history_user_id) == (beta.pk, None)
        assert "copied into its Dimension" in copy_history.history_change_reason
        # Each Dimension's passages, current and history rows, name its own source.
        assert {ref: Passage_.objects.get(pk=p.pk).source_id for ref, p in made.items()} == {
            "urn:p:a1": shared.pk,
            "urn:p:b1": copy.pk,
            "urn:p:a2": shared.pk,
        }
        assert list(
            HistoricalPassage.objects.filter(passage_id=made["urn:p:b1"].pk).values_list(
                "source_id", flat=True
            )
        ) == [copy.pk]
        # A source no passage uses goes to the Dimension its first user curates.
        assert Source_.objects.get(pk=lonely.pk).dimension_id == gamma.pk
        assert Source_.objects.count() == 3
        with pytest.raises(IntegrityError), transaction.atomic():
            Source_.objects.create(dimension_id=beta.pk, canonical_url="https://example.org/shared")
    finally:
        _migrate(_latest())
