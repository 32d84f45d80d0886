"""pgcrypto on PostgreSQL (the write's statement computes the commitments with its
hmac() and makes keys with gen_random_bytes()), and a log with its key for every
Dimension that exists already (new ones get theirs when created)."""

import os

from django.db import migrations


def pgcrypto(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pgcrypto")


def logs(apps, schema_editor):
    Dimension = apps.get_model("policies", "Dimension")
    Log = apps.get_model("transparency", "Log")
    RecordKey = apps.get_model("transparency", "RecordKey")
    for dimension in Dimension.objects.all():
        log, _ = Log.objects.get_or_create(dimension=dimension)
        subject = f"log:{log.pk}"
        if not RecordKey.objects.filter(subject=subject, destroyed_at__isnull=True).exists():
            RecordKey.objects.create(subject=subject, key=os.urandom(32))


class Migration(migrations.Migration):
    dependencies = [("transparency", "0001_transparency_log")]

    operations = [
        migrations.RunPython(pgcrypto, migrations.RunPython.noop),
        migrations.RunPython(logs, migrations.RunPython.noop),
    ]
