"""Tokens used to be DRF authtoken rows, stored in clear. Client tokens are now
hashed (django-rest-knox, policies/tokens.py); the clear keys left by an older
release are destroyed here rather than carried over. Clients get new tokens from
`manage.py issue_token`. A database that never had the table is left alone."""

from django.db import migrations


def destroy_clear_text_tokens(apps, schema_editor):
    connection = schema_editor.connection
    if "authtoken_token" in connection.introspection.table_names():
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM authtoken_token")


class Migration(migrations.Migration):
    dependencies = [("policies", "0003_cache_table")]

    operations = [
        migrations.RunPython(destroy_clear_text_tokens, migrations.RunPython.noop, elidable=True)
    ]
