"""evidence 0003 (evidence belongs to a Dimension) run on real rows: from the schema
before it, with the historical models of that state, forward to the latest."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

BEFORE = ("evidence", "0002_history_indexes_for_reads_only")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _executor() -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    return executor


def _latest() -> list[tuple[str, str]]:
    return _executor().loader.graph.leaf_nodes()


def _before() -> list[tuple[str, str]]:
    """evidence just before 0003, every other app at its latest (none depends on 0003)."""
    return [node for node in _latest() if node[0] != "evidence"] + [BEFORE]


def _migrate(targets) -> object:
    """Migrate to `targets`; the apps (historical models) of the state reached."""
    executor = _executor()
    executor.migrate(targets)
    return _executor().loader.project_state(targets).apps


def _history(apps, label: str, row, **extra):
    """The history row simple-history would have written for `row`."""
    model = apps.get_model(label)
    historical = apps.get_model(label.replace(".", ".Historical", 1))
    values = {f.attname: getattr(row, f.attname) for f in model._meta.concrete_fields}
    return historical.objects.create(**values, history_type="+", **extra)


def _dimension(apps, name: str):
    return apps.get_model("policies.Dimension").objects.create(
        name=name,
        namespace=f"urn:test:{name}",
        policy_package_ref="urn:policy:test@1",
        disposition_policy_ref="urn:policy:retention@1",
        disclosure_policy_ref="urn:policy:disclosure@1",
        safety_policy_ref="urn:policy:safety@1",
        owner_ref="role:grounding-curator",
    )


def _bind(apps, passage, dimension, profile, user, at: datetime):
    """A link of `dimension` whose current passage binding (and its history) is `passage`."""
    link = apps.get_model("grounding.GroundingLink").objects.create(
        dimension=dimension,
        profile=profile,
        owner_ref="role:grounding-curator",
        support_kind="quotation",
        support_scope={"kind": "whole"},
        observed_at=at,
        disposition_policy_ref=dimension.disposition_policy_ref,
        disclosure_policy_ref=dimension.disclosure_policy_ref,
        safety_policy_ref=dimension.safety_policy_ref,
        mapping_profile_ref="urn:mapping:test@1",
        created_by_id=user.pk,
    )
    Binding = apps.get_model("grounding.PassageBinding")
    binding = Binding.objects.create(
        link=link,
        bound_in_revision=1,
        passage=passage,
        passage_ref=passage.passage_ref,
        source_revision_binding={"revision": "r1"},
        source_selector={"type": "TextQuoteSelector", "exact": "quoted"},
        selector_profile="urn:selector:text-quote@1",
    )
    # Binding order decides the passage's home Dimension; don't leave it to the clock.
    Binding.objects.filter(pk=binding.pk).update(created_at=at)
    binding.refresh_from_db()
    _history(apps, "grounding.PassageBinding", binding, history_date=at)
    link.current_passage = binding
    link.save(update_fields=["current_passage"])
    return link, binding


def _passage(apps, ref: str, content, envelope=None, **fields):
    passage = apps.get_model("evidence.Passage").objects.create(
        passage_ref=ref,
        content=content,
        content_sha256=content.sha256,
        kind="search_result",
        retrieval_observation=envelope,
        **fields,
    )
    _history(apps, "evidence.Passage", passage, history_date=passage.created_at)
    return passage


def _envelope(apps, execution_id: str, imported_by):
    return apps.get_model("evidence.RetrievalObservation").objects.create(
        execution_id=execution_id,
        capability="search",
        status="succeeded",
        results=[{"observation_id": "obs-1"}],
        document_sha256="d" * 64,
        imported_by_id=imported_by.pk if imported_by else None,
    )


@pytest.mark.django_db(transaction=True)
def test_each_passage_gets_a_dimension_and_shared_ones_are_copied():
    try:
        old = _migrate(_before())
        User = old.get_model("auth.User")
        Membership = old.get_model("policies.DimensionMembership")
        alpha, beta, gamma = (_dimension(old, n) for n in ("alpha", "beta", "gamma"))
        importer = User.objects.create(username="importer")
        # beta sorts first by name, but gamma is the Dimension the importer curates.
        Membership.objects.create(user=importer, dimension=beta, role="reviewer")
        Membership.objects.create(user=importer, dimension=gamma, role="curator")
        linker = User.objects.create(username="linker")
        profile = old.get_model("policies.Profile").objects.create(
            name="p", version="1.0.0", status="published", mapping_profile_ref="urn:m@1"
        )
        content = old.get_model("evidence.Content").objects.create(
            sha256="a" * 64, text="quoted", length=6
        )
        e_unbound = _envelope(old, "exec-unbound", importer)
        unbound = _passage(old, "urn:p:unbound", content, e_unbound, execution_id="exec-unbound")
        e_shared = _envelope(old, "exec-shared", linker)
        shared = _passage(
            old,
            "urn:p:shared",
            content,
            e_shared,
            execution_id="exec-shared",
            observation_id="obs-1",
        )
        orphan = _passage(old, "urn:p:orphan", content)
        # Another passage of the shared envelope, bound from beta only, a duplicate.
        beta_only = _passage(
            old, "urn:p:beta", content, e_shared, duplicate_of=shared, execution_id="exec-shared"
        )
        link_a, binding_a = _bind(old, shared, alpha, profile, linker, T0)
        link_b, binding_b = _bind(old, shared, beta, profile, linker, T0 + timedelta(hours=1))
        _bind(old, beta_only, beta, profile, linker, T0)

        new = _migrate(_latest())
        Passage = new.get_model("evidence.Passage")
        HistoricalPassage = new.get_model("evidence.HistoricalPassage")
        Envelope = new.get_model("evidence.RetrievalObservation")
        Binding = new.get_model("grounding.PassageBinding")
        HistoricalBinding = new.get_model("grounding.HistoricalPassageBinding")

        # Unbound: the importer's curated Dimension, envelope alongside.
        assert Passage.objects.get(pk=unbound.pk).dimension_id == gamma.pk
        assert Envelope.objects.get(pk=e_unbound.pk).dimension_id == gamma.pk
        # No links, no importer: the oldest Dimension.
        assert Passage.objects.get(pk=orphan.pk).dimension_id == alpha.pk
        assert Envelope.objects.get(pk=e_shared.pk).dimension_id == alpha.pk
        # History rows of the originals carry their Dimension too.
        assert dict(
            HistoricalPassage.objects.filter(
                passage_id__in=[unbound.pk, shared.pk, orphan.pk]
            ).values_list("passage_id", "dimension_id")
        ) == {unbound.pk: gamma.pk, shared.pk: alpha.pk, orphan.pk: alpha.pk}

        # Shared: stays in the Dimension that bound it first; beta gets a copy.
        original = Passage.objects.get(pk=shared.pk)
        assert original.dimension_id == alpha.pk
        assert original.retrieval_observation_id == e_shared.pk
        copy = Passage.objects.exclude(pk=shared.pk).get(passage_ref="urn:p:shared")
        assert copy.dimension_id == beta.pk
        assert (copy.content_id, copy.content_sha256) == (content.sha256, "a" * 64)
        assert (copy.execution_id, copy.observation_id) == ("exec-shared", "obs-1")
        assert copy.duplicate_of_id is None
        envelope_copy = Envelope.objects.get(pk=copy.retrieval_observation_id)
        assert envelope_copy.pk != e_shared.pk
        assert envelope_copy.dimension_id == beta.pk
        assert envelope_copy.execution_id == "exec-shared"
        assert envelope_copy.results == [{"observation_id": "obs-1"}]
        assert envelope_copy.imported_by_id == linker.pk
        assert envelope_copy.imported_at == e_shared.imported_at
        assert copy.created_at == shared.created_at
        # beta's own passage of that envelope points at beta's envelope, history too.
        moved = Passage.objects.get(pk=beta_only.pk)
        assert (moved.dimension_id, moved.retrieval_observation_id) == (beta.pk, envelope_copy.pk)
        assert moved.duplicate_of_id == copy.pk  # beta's copy of the root, not alpha's
        assert list(
            HistoricalPassage.objects.filter(passage_id=beta_only.pk).values_list(
                "dimension_id", "retrieval_observation_id", "duplicate_of_id"
            )
        ) == [(beta.pk, envelope_copy.pk, copy.pk)]
        assert Passage.objects.count() == 5
        assert Envelope.objects.count() == 3

        (copy_history,) = HistoricalPassage.objects.filter(passage_id=copy.pk)
        assert copy_history.history_type == "+"
        assert copy_history.dimension_id == beta.pk
        assert copy_history.retrieval_observation_id == envelope_copy.pk
        assert copy_history.passage_ref == "urn:p:shared"
        assert "copied into its Dimension" in copy_history.history_change_reason

        # beta's binding, current and history, names the copy; alpha's is untouched.
        assert Binding.objects.get(pk=binding_b.pk).passage_id == copy.pk
        assert Binding.objects.get(pk=binding_a.pk).passage_id == shared.pk
        assert list(
            HistoricalBinding.objects.filter(link_id=link_b.pk).values_list("passage_id", flat=True)
        ) == [copy.pk]
        assert list(
            HistoricalBinding.objects.filter(link_id=link_a.pk).values_list("passage_id", flat=True)
        ) == [shared.pk]

        # The per-Dimension unique constraints hold on the migrated rows.
        with pytest.raises(IntegrityError), transaction.atomic():
            Passage.objects.create(
                dimension_id=beta.pk, passage_ref="urn:p:shared", kind="search_result"
            )
        with pytest.raises(IntegrityError), transaction.atomic():
            Passage.objects.create(
                dimension_id=beta.pk,
                passage_ref="urn:p:other",
                kind="search_result",
                execution_id="exec-shared",
                observation_id="obs-1",
            )
        with pytest.raises(IntegrityError), transaction.atomic():
            Envelope.objects.create(
                dimension_id=beta.pk,
                execution_id="exec-shared",
                capability="search",
                status="succeeded",
                document_sha256="d" * 64,
            )
        # The same execution in a Dimension that has none of it is another envelope.
        Envelope.objects.create(
            dimension_id=gamma.pk,
            execution_id="exec-shared",
            capability="search",
            status="succeeded",
            document_sha256="d" * 64,
        )
    finally:
        _migrate(_latest())


@pytest.mark.django_db(transaction=True)
def test_without_any_dimension_evidence_goes_to_an_inactive_unassigned_one():
    try:
        old = _migrate(_before())
        content = old.get_model("evidence.Content").objects.create(
            sha256="b" * 64, text="lonely", length=6
        )
        envelope = _envelope(old, "exec-lonely", None)
        passage = _passage(old, "urn:p:lonely", content, envelope, execution_id="exec-lonely")

        new = _migrate(_latest())
        (dimension,) = new.get_model("policies.Dimension").objects.all()
        assert (dimension.name, dimension.is_active) == ("unassigned-evidence", False)
        assert new.get_model("evidence.Passage").objects.get(pk=passage.pk).dimension_id == (
            dimension.pk
        )
        envelopes = new.get_model("evidence.RetrievalObservation").objects
        assert envelopes.get(pk=envelope.pk).dimension_id == dimension.pk
    finally:
        _migrate(_latest())
