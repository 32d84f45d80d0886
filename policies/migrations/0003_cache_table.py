"""The database cache table (throttle counters; settings.CACHES), as `createcachetable`
makes it, so `migrate` alone prepares a deployment. Django's own command does the
work: it creates the table of every database-backed cache in settings, and nothing
when the cache is Redis (REDIS_URL). Switching to the database cache later:
`manage.py createcachetable`."""

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.db import BaseDatabaseCache
from django.core.management import call_command
from django.db import migrations


def create_cache_tables(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


def drop_cache_tables(apps, schema_editor):
    for alias in settings.CACHES:
        cache = caches[alias]
        if isinstance(cache, BaseDatabaseCache):
            table = schema_editor.connection.ops.quote_name(cache._table)
            schema_editor.execute(f"DROP TABLE IF EXISTS {table}")


class Migration(migrations.Migration):
    dependencies = [("policies", "0002_fewer_write_indexes")]

    operations = [migrations.RunPython(create_cache_tables, drop_cache_tables, elidable=False)]
