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
    for passage in Passage.objects.order_by("created_at", "passage_id").iterator():
        bound = list(
            Binding.objects.filter(passage_id=passage.pk)
            .order_by("created_at")
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
            envelope_dimension.setdefault(passage.retrieval_observation_id, home)
        for other in others:
            _copy_into(apps, passage, other, Binding, HistoricalBinding, envelope_dimension)

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


def _copy_into(apps, passage, dimension_id, Binding, HistoricalBinding, envelope_dimension):
    """A copy of `passage` (and its envelope) owned by `dimension_id`, rebound there."""
    import uuid

    Passage = apps.get_model("evidence", "Passage")
    HistoricalPassage = apps.get_model("evidence", "HistoricalPassage")
    Envelope = apps.get_model("evidence", "RetrievalObservation")
    envelope_id = None
    if passage.retrieval_observation_id:
        original = Envelope.objects.get(pk=passage.retrieval_observation_id)
        copy = Envelope.objects.filter(
            execution_id=original.execution_id, dimension_id=dimension_id
        ).first()
        if copy is None:
            copy = Envelope.objects.get(pk=original.pk)
            copy.pk = uuid.uuid4()
            copy.dimension_id = dimension_id
            copy.save(force_insert=True)
        envelope_id = copy.pk
        envelope_dimension[copy.pk] = dimension_id
    clone = Passage.objects.get(pk=passage.pk)
    clone.pk = uuid.uuid4()
    clone.dimension_id = dimension_id
    clone.retrieval_observation_id = envelope_id
    clone.duplicate_of_id = None
    clone.save(force_insert=True)
    fields = [f.attname for f in Passage._meta.concrete_fields]
    HistoricalPassage.objects.create(
        **{name: getattr(clone, name) for name in fields},
        history_date=clone.created_at,
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
