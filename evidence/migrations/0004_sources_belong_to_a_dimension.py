"""Sources belong to a Dimension (issue 25).

A source row carries an access label and a history naming whoever imported it; both
are a Dimension's. Each existing source goes to the Dimension of its earliest
passage; a source whose passages are in several Dimensions is copied once per
further Dimension (same URL, host and label, so nothing restricted becomes public),
and those Dimensions' passages, current and history rows, point at their copy. The
original's history rows stay with it. A source with no passage goes to the Dimension
its first recorded user curates (else any Dimension of theirs, else the oldest).
"""

import uuid

import django.db.models.deletion
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
    Source = apps.get_model("evidence", "Source")
    HistoricalSource = apps.get_model("evidence", "HistoricalSource")
    Passage = apps.get_model("evidence", "Passage")

    existing = list(Source.objects.order_by("created_at", "source_id").values_list("pk"))
    for (source_id,) in existing:
        source = Source.objects.get(pk=source_id)
        dimensions = list(
            dict.fromkeys(
                Passage.objects.filter(source_id=source.pk)
                .order_by("created_at", "passage_id")
                .values_list("dimension_id", flat=True)
            )
        )
        if not dimensions:
            first_user = (
                HistoricalSource.objects.filter(source_id=source.pk)
                .order_by("history_date", "history_id")
                .values_list("history_user_id", flat=True)
                .first()
            )
            dimensions = [_fallback_dimension(apps, first_user)]
        home, others = dimensions[0], dimensions[1:]
        Source.objects.filter(pk=source.pk).update(dimension_id=home)
        HistoricalSource.objects.filter(source_id=source.pk).update(dimension_id=home)
        for other in others:
            _copy_into(apps, source, other)

    # PostgreSQL defers foreign-key checks to commit; the rows written above leave
    # pending trigger events, and the ALTER TABLEs that follow in this transaction
    # refuse to run while any are pending. Check them now.
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def _copy_into(apps, source, dimension_id):
    """A copy of `source` owned by `dimension_id`, with that Dimension's passages."""
    Source = apps.get_model("evidence", "Source")
    HistoricalSource = apps.get_model("evidence", "HistoricalSource")
    Passage = apps.get_model("evidence", "Passage")
    HistoricalPassage = apps.get_model("evidence", "HistoricalPassage")
    values = {
        "canonical_url": source.canonical_url,
        "host": source.host,
        "access_label": source.access_label,
    }
    copy = Source.objects.create(source_id=uuid.uuid4(), dimension_id=dimension_id, **values)
    # The same source, known since the original was (auto_now_add reset it); its
    # history row is dated when the copy was written, by no user.
    Source.objects.filter(pk=copy.pk).update(created_at=source.created_at)
    HistoricalSource.objects.create(
        source_id=copy.pk,
        dimension_id=dimension_id,
        created_at=source.created_at,
        history_date=timezone.now(),
        history_type="+",
        history_change_reason="copied into its Dimension (sources belong to a Dimension)",
        **values,
    )
    moved = list(
        Passage.objects.filter(source_id=source.pk, dimension_id=dimension_id).values_list(
            "pk", flat=True
        )
    )
    Passage.objects.filter(pk__in=moved).update(source_id=copy.pk)
    HistoricalPassage.objects.filter(passage_id__in=moved, source_id=source.pk).update(
        source_id=copy.pk
    )


class Migration(migrations.Migration):
    dependencies = [
        ("evidence", "0003_evidence_belongs_to_a_dimension"),
        ("policies", "0002_fewer_write_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="historicalsource",
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
            model_name="source",
            name="dimension",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="sources",
                to="policies.dimension",
            ),
        ),
        migrations.AlterField(
            model_name="source",
            name="canonical_url",
            field=models.CharField(max_length=2048),
        ),
        migrations.RunPython(assign_dimensions, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="source",
            name="dimension",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="sources",
                to="policies.dimension",
            ),
        ),
        migrations.AddConstraint(
            model_name="source",
            constraint=models.UniqueConstraint(
                fields=("dimension", "canonical_url"), name="source_unique_url_per_dimension"
            ),
        ),
    ]
