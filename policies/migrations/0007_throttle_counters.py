"""Throttle counters (common.web.throttling): one row per caller, scope and window.

On PostgreSQL the table is UNLOGGED: a counted request writes no WAL and waits for no
flush at commit. A crash empties it, which forgets at most the current windows' counts;
counters are never read from a replica, which has no unlogged rows."""

from django.db import migrations, models

TABLE = "policies_throttlecounter"


def _persistence(logged: str):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(f"ALTER TABLE {TABLE} SET {logged}")

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("policies", "0006_internal_decision_refs_name_no_dimension"),
    ]

    operations = [
        migrations.CreateModel(
            name="ThrottleCounter",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "ident",
                    models.CharField(
                        help_text="The caller: user:<id> or ip:<address>.", max_length=64
                    ),
                ),
                ("scope", models.CharField(max_length=32)),
                (
                    "window_end",
                    models.BigIntegerField(help_text="End of the window, in Unix seconds."),
                ),
                ("count", models.PositiveIntegerField(default=0)),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("window_end", "scope", "ident"), name="throttle_counter_unique"
                    )
                ],
            },
        ),
        migrations.RunPython(_persistence("UNLOGGED"), _persistence("LOGGED"), elidable=False),
    ]
