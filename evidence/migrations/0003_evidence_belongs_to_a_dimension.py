"""Evidence belongs to a Dimension (issue 12).

Each existing passage goes to the Dimension of the links that bind it; a passage
bound from several Dimensions is copied once per further Dimension (with its
envelope) and those Dimensions' bindings, current and history rows, point at the
copy, so no Dimension reads another's evidence. An unbound passage goes to the
Dimension its importer curates (else any Dimension of the importer, else the oldest
Dimension). Envelopes follow their passages.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.utils import timezone


def _fallback_dimension(apps, user_id):
    Dimension = apps.get_model("policies", "Dimension")
    Membership = apps.get_model("policies", "DimensionMembership")
    if user_id is not None:
        rows = Membership.objects.filter(user_id=user_id).order_by("role", "dimension__name")
        curated = rows.filter(role="curator").first() or rows.first()
        if curated is not None:
            return curated.dimension_id
    first = Dimension.objects.order_by("pk").first()
    if first is None:
        first = Dimension.objects.create(
            name="unassigned-evidence",
            namespace="urn:grounding:unassigned-evidence",
            policy_package_ref="urn:grounding:unassigned-evidence:package",
            disposition_policy_ref="urn:grounding:unassigned-evidence:retention",
            disclosure_policy_ref="urn:grounding:unassigned-evidence:disclosure",
            safety_policy_ref="urn:grounding:unassigned-evidence:safety",
            owner_ref="role:steward",
            is_active=False,
        )
    return first.pk


def assign_dimensions(apps, schema_editor):
    Passage = apps.get_model("evidence", "Passage")
    HistoricalPassage = apps.get_model("evidence", "HistoricalPassage")
    Envelope = apps.get_model("evidence", "RetrievalObservation")
    Binding = apps.get_model("grounding", "PassageBinding")
    HistoricalBinding = apps.get_model("grounding", "HistoricalPassageBinding")

    envelope_dimension = {}
    # The passages as they were: copies written below are not visited again.
    existing = list(Passage.objects.order_by("created_at", "passage_id").values_list("pk"))
    for (passage_id,) in existing:
        passage = Passage.objects.get(pk=passage_id)
        bound = list(
            Binding.objects.filter(passage_id=passage.pk)
            .order_by("created_at", "binding_id")
            .values_list("link__dimension_id", flat=True)
        )
        dimensions = list(dict.fromkeys(bound))
        if not dimensions:
            importer = None
            if passage.retrieval_observation_id:
                importer = (
                    Envelope.objects.filter(pk=passage.retrieval_observation_id)
                    .values_list("imported_by_id", flat=True)
                    .first()
                )
            dimensions = [_fallback_dimension(apps, importer)]
        home, others = dimensions[0], dimensions[1:]
        Passage.objects.filter(pk=passage.pk).update(dimension_id=home)
        HistoricalPassage.objects.filter(passage_id=passage.pk).update(dimension_id=home)
        if passage.retrieval_observation_id:
            # Passages of one envelope may go to different Dimensions: each points
            # at the envelope of its own Dimension.
            envelope_id = _envelope_in(
                Envelope, passage.retrieval_observation_id, home, envelope_dimension
            )
            if envelope_id != passage.retrieval_observation_id:
                Passage.objects.filter(pk=passage.pk).update(retrieval_observation_id=envelope_id)
                HistoricalPassage.objects.filter(
                    passage_id=passage.pk,
                    retrieval_observation_id=passage.retrieval_observation_id,
                ).update(retrieval_observation_id=envelope_id)
        for other in others:
            _copy_into(apps, passage, other, Binding, HistoricalBinding, envelope_dimension)

    # duplicate_of names a root of the passage's own Dimension: the root's copy there
    # when it was copied, else none (another Dimension's passage is not to be named).
    crossing = list(
        Passage.objects.filter(duplicate_of__isnull=False)
        .exclude(dimension_id=models.F("duplicate_of__dimension_id"))
        .values_list("pk", "dimension_id", "duplicate_of__passage_ref")
    )
    for passage_id, dimension_id, root_ref in crossing:
        root = (
            Passage.objects.filter(dimension_id=dimension_id, passage_ref=root_ref)
            .values_list("pk", flat=True)
            .first()
        )
        Passage.objects.filter(pk=passage_id).update(duplicate_of_id=root)
        HistoricalPassage.objects.filter(passage_id=passage_id).update(duplicate_of_id=root)

    for envelope in Envelope.objects.filter(dimension__isnull=True).iterator():
        dimension = envelope_dimension.get(envelope.pk) or _fallback_dimension(
            apps, envelope.imported_by_id
        )
        Envelope.objects.filter(pk=envelope.pk).update(dimension_id=dimension)

    # PostgreSQL defers foreign-key checks to commit; the rows written above leave
    # pending trigger events, and the ALTER TABLEs that follow in this transaction
    # refuse to run while any are pending. Check them now.
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def _envelope_in(Envelope, envelope_id, dimension_id, envelope_dimension):
    """The envelope of `dimension_id` for the execution of `envelope_id`: the envelope
    itself when it is (or is now made) that Dimension's, else its copy there."""
    import uuid

    if envelope_dimension.setdefault(envelope_id, dimension_id) == dimension_id:
        return envelope_id
    original = Envelope.objects.get(pk=envelope_id)
    copy = Envelope.objects.filter(
        execution_id=original.execution_id, dimension_id=dimension_id
    ).first()
    if copy is None:
        imported_at = original.imported_at
        copy = original
        copy.pk = uuid.uuid4()
        copy.dimension_id = dimension_id
        copy.save(force_insert=True)
        # The same execution, received when the original was (auto_now_add reset it).
        Envelope.objects.filter(pk=copy.pk).update(imported_at=imported_at)
    envelope_dimension[copy.pk] = dimension_id
    return copy.pk


def _copy_into(apps, passage, dimension_id, Binding, HistoricalBinding, envelope_dimension):
    """A copy of `passage` (and its envelope) owned by `dimension_id`, rebound there."""
    import uuid

    Passage = apps.get_model("evidence", "Passage")
    HistoricalPassage = apps.get_model("evidence", "HistoricalPassage")
    Envelope = apps.get_model("evidence", "RetrievalObservation")
    envelope_id = None
    if passage.retrieval_observation_id:
        envelope_id = _envelope_in(
            Envelope, passage.retrieval_observation_id, dimension_id, envelope_dimension
        )
    clone = Passage.objects.get(pk=passage.pk)
    clone.pk = uuid.uuid4()
    clone.dimension_id = dimension_id
    clone.retrieval_observation_id = envelope_id
    clone.duplicate_of_id = None
    clone.save(force_insert=True)
    # The same observation, made when the original was (auto_now_add reset it); its
    # history row is dated when the copy was written.
    Passage.objects.filter(pk=clone.pk).update(created_at=passage.created_at)
    clone.created_at = passage.created_at
    fields = [f.attname for f in Passage._meta.concrete_fields]
    HistoricalPassage.objects.create(
        **{name: getattr(clone, name) for name in fields},
        history_date=timezone.now(),
        history_type="+",
        history_change_reason="copied into its Dimension (evidence belongs to a Dimension)",
    )
    links = Binding.objects.filter(passage_id=passage.pk, link__dimension_id=dimension_id)
    link_ids = list(links.values_list("link_id", flat=True))
    links.update(passage_id=clone.pk)
    HistoricalBinding.objects.filter(passage_id=passage.pk, link_id__in=link_ids).update(
        passage_id=clone.pk
    )


class Migration(migrations.Migration):
    dependencies = [
        ("evidence", "0002_history_indexes_for_reads_only"),
        ("grounding", "0004_fewer_write_indexes"),
        ("policies", "0002_fewer_write_indexes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="passage",
            name="passage_unique_observation_per_execution",
        ),
        migrations.AddField(
            model_name="historicalpassage",
            name="dimension",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to="policies.dimension",
            ),
        ),
        migrations.AddField(
            model_name="passage",
            name="dimension",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="passages",
                to="policies.dimension",
            ),
        ),
        migrations.AddField(
            model_name="retrievalobservation",
            name="dimension",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="retrieval_observations",
                to="policies.dimension",
            ),
        ),
        migrations.AlterField(
            model_name="passage",
            name="passage_ref",
            field=models.CharField(
                help_text="External identity and revision of this passage.", max_length=512
            ),
        ),
        migrations.AlterField(
            model_name="retrievalobservation",
            name="execution_id",
            field=models.CharField(max_length=255),
        ),
        migrations.RunPython(assign_dimensions, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="passage",
            name="dimension",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="passages",
                to="policies.dimension",
            ),
        ),
        migrations.AlterField(
            model_name="retrievalobservation",
            name="dimension",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="retrieval_observations",
                to="policies.dimension",
            ),
        ),
        migrations.AddConstraint(
            model_name="passage",
            constraint=models.UniqueConstraint(
                fields=("dimension", "passage_ref"), name="passage_unique_ref_per_dimension"
            ),
        ),
        migrations.AddConstraint(
            model_name="passage",
            constraint=models.UniqueConstraint(
                condition=models.Q(("execution_id", ""), _negated=True),
                fields=("dimension", "execution_id", "observation_id"),
                name="passage_unique_observation_per_execution",
            ),
        ),
        migrations.AddConstraint(
            model_name="retrievalobservation",
            constraint=models.UniqueConstraint(
                fields=("dimension", "execution_id"), name="envelope_unique_execution"
            ),
        ),
    ]
