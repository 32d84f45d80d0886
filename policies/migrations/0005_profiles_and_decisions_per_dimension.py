"""Tenancy: a decision_ref names a decision within its Dimension (unique per
Dimension, no longer across all), and a profile belongs to a Dimension or, with
none, is shared by every Dimension (name@version unique among the shared ones and
within each Dimension). Existing profiles stay shared."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("policies", "0004_destroy_clear_text_tokens"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="profile",
            name="profile_name_version_unique",
        ),
        migrations.AddField(
            model_name="historicalprofile",
            name="dimension",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                help_text="The Dimension the profile belongs to; empty: shared by every Dimension.",
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to="policies.dimension",
            ),
        ),
        migrations.AddField(
            model_name="profile",
            name="dimension",
            field=models.ForeignKey(
                blank=True,
                help_text="The Dimension the profile belongs to; empty: shared by every Dimension.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="profiles",
                to="policies.dimension",
            ),
        ),
        migrations.AlterField(
            model_name="disclosuredecision",
            name="decision_ref",
            field=models.CharField(max_length=255),
        ),
        migrations.AlterField(
            model_name="historicaldisclosuredecision",
            name="decision_ref",
            field=models.CharField(max_length=255),
        ),
        migrations.AddConstraint(
            model_name="disclosuredecision",
            constraint=models.UniqueConstraint(
                fields=("dimension", "decision_ref"), name="decision_ref_unique_per_dimension"
            ),
        ),
        migrations.AddConstraint(
            model_name="profile",
            constraint=models.UniqueConstraint(
                condition=models.Q(("dimension__isnull", True)),
                fields=("name", "version"),
                name="profile_shared_name_version_unique",
                violation_error_code="unique",
                violation_error_message="a shared profile has this name and version.",
            ),
        ),
        migrations.AddConstraint(
            model_name="profile",
            constraint=models.UniqueConstraint(
                fields=("dimension", "name", "version"),
                name="profile_name_version_unique_per_dimension",
                violation_error_code="unique",
                violation_error_message="a profile of the Dimension has this name and version.",
            ),
        ),
    ]
