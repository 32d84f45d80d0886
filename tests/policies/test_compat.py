"""common.kernel.compat: each library internal the fast paths rely on still behaves as
relied on, one test per internal, on the project's models and the real database. A
library upgrade that changes one fails here, by name."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlparse

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import DataError, connection, models
from django.test.utils import CaptureQueriesContext, isolate_apps
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ComponentRegistry
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from common.kernel import compat
from common.web.pagination import CursorPagination
from grounding.models import GroundingLink
from policies import governance
from policies.models import AuditEvent, Dimension, Profile
from tests import factories
from tests.conftest import requires_postgres

pytestmark = pytest.mark.django_db


def _profile(dimension: Dimension, **values) -> Profile:
    """A draft profile of `dimension`."""
    values = {
        "name": "wm-mem-016", "version": f"1.0.{Profile.objects.count()}",
        "support_vocabulary": ["supports"], "selector_profiles": ["nfc-codepoint-halfopen@1"],
        "field_schemas": {}, "mapping_profile_ref": "urn:grounding:mapping:web-annotation@1",
        "endpoint_role_map": {"statement": "target", "passage": "body"}, **values,
    }  # fmt: skip
    return governance.create_profile(actor=None, values=values, dimension=dimension)


def _dimension_values(name: str) -> dict:
    return dict(
        name=name, namespace=f"urn:x:{name}", policy_package_ref="p", disposition_policy_ref="d",
        disclosure_policy_ref="c", safety_policy_ref="s", owner_ref="o",
    )  # fmt: skip


def test_related_cache_is_what_the_forward_descriptor_reads_and_fills(django_assert_num_queries):
    dimension = factories.make_dimension()
    profile = Profile.objects.get(pk=_profile(dimension).pk)
    assert compat.related_cache(profile) == {}
    with django_assert_num_queries(1):
        assert profile.dimension == dimension
    assert compat.related_cache(profile) == {"dimension": dimension}
    other = factories.make_dimension()
    compat.related_cache(profile)["dimension"] = other
    with django_assert_num_queries(0):
        assert profile.dimension is other
    compat.related_cache(profile).pop("dimension")
    with django_assert_num_queries(1):
        assert profile.dimension == dimension


def test_is_adding_is_true_until_saved_and_false_for_a_read_row():
    built = Dimension(**_dimension_values("adding"))
    assert compat.is_adding(built) is True
    built.save()
    assert compat.is_adding(built) is False
    assert compat.is_adding(Dimension.objects.get(pk=built.pk)) is False


def test_stored_on_names_the_alias_written_to_or_read_from():
    built = Dimension(**_dimension_values("stored"))
    assert compat.stored_on(built) is None
    built.save()
    assert compat.stored_on(built) == "default"
    assert compat.stored_on(Dimension.objects.using("default").get(pk=built.pk)) == "default"


def test_mark_stored_leaves_the_state_a_save_leaves():
    saved = Dimension(**_dimension_values("saved"))
    saved.save()
    written = Dimension(**_dimension_values("written"))
    compat.mark_stored(written, "default")
    assert (compat.is_adding(written), compat.stored_on(written)) == (False, "default")
    assert (compat.is_adding(saved), compat.stored_on(saved)) == (False, "default")


def test_bare_instance_is_the_instance_from_db_builds(django_assert_num_queries):
    dimension = factories.make_dimension()
    row = Dimension.objects.get(pk=dimension.pk)
    attnames = [f.attname for f in Dimension._meta.concrete_fields]
    full = compat.bare_instance(Dimension, {a: getattr(row, a) for a in attnames}, using="default")
    assert type(full) is Dimension and full == row
    assert {a: getattr(full, a) for a in attnames} == {a: getattr(row, a) for a in attnames}
    assert (compat.is_adding(full), compat.stored_on(full)) == (False, "default")
    # A field not given is deferred: read from the row on first access.
    partial = compat.bare_instance(Dimension, {"id": row.pk, "name": row.name}, using="default")
    assert partial.get_deferred_fields() == set(attnames) - {"id", "name"}
    with django_assert_num_queries(1):
        assert partial.namespace == row.namespace
    # Unsaved, with a related object cached as the descriptor caches it.
    new = compat.bare_instance(Profile, {"dimension_id": row.pk}, cached={"dimension": row})
    assert (compat.is_adding(new), compat.stored_on(new)) == (True, None)
    with django_assert_num_queries(0):
        assert new.dimension is row


def test_forget_cached_drops_the_related_object(django_assert_num_queries):
    profile = _profile(factories.make_dimension())
    read = Profile.objects.select_related("dimension").get(pk=profile.pk)
    assert "dimension" in compat.related_cache(read)
    compat.forget_cached(Profile._meta.get_field("dimension"), read)
    assert "dimension" not in compat.related_cache(read)
    with django_assert_num_queries(1):
        assert read.dimension.pk == profile.dimension_id


def test_cache_related_none_answers_a_reverse_one_to_one_without_a_query(
    django_assert_num_queries,
):
    link = GroundingLink()
    compat.cache_related(GroundingLink.withdrawal.related, link, None)
    with django_assert_num_queries(0):
        assert not hasattr(link, "withdrawal")


def test_prepare_related_for_save_mirrors_djangos_check_and_keys():
    related = [
        (f.name, f.attname, f.target_field.attname, f)
        for f in Profile._meta.concrete_fields
        if f.is_relation
    ]
    unsaved = Profile(dimension=Dimension(**_dimension_values("unsaved")))
    with pytest.raises(ValueError) as django_refusal:
        Profile.objects.bulk_create([Profile(dimension=Dimension(**_dimension_values("u2")))])
    with pytest.raises(ValueError) as ours:
        compat.prepare_related_for_save(unsaved, related)
    assert str(ours.value) == str(django_refusal.value)
    assert str(ours.value) == (
        "bulk_create() prohibited to prevent data loss due to unsaved related object 'dimension'."
    )
    # A related object saved after it was assigned gives its key, as in Django.
    dimension = Dimension(**_dimension_values("later"))
    profile, twin = Profile(dimension=dimension), Profile(dimension=dimension)
    dimension.save()
    assert profile.dimension_id is None
    compat.prepare_related_for_save(profile, related)
    twin._prepare_related_fields_for_save(operation_name="bulk_create")
    assert profile.dimension_id == twin.dimension_id == dimension.pk
    assert compat.related_cache(profile).keys() == compat.related_cache(twin).keys()
    # A cached object whose key is not the instance's is dropped from the cache.
    profile.dimension_id = factories.make_dimension().pk
    compat.related_cache(profile)["dimension"] = dimension
    compat.prepare_related_for_save(profile, related)
    assert "dimension" not in compat.related_cache(profile)


def test_private_fields_are_the_generic_relations():
    assert compat.private_fields(Dimension) == []
    assert compat.private_fields(AuditEvent) == []
    with isolate_apps("policies"):

        class Tagged(models.Model):  # noqa: DJ008
            content_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)
            object_id = models.PositiveIntegerField()
            target = GenericForeignKey("content_type", "object_id")

            class Meta:
                app_label = "policies"

        assert [f.name for f in compat.private_fields(Tagged)] == ["target"]


def test_db_converters_turn_a_raw_column_into_the_orm_value():
    profile = _profile(factories.make_dimension(), field_schemas={"a": [1]})
    fields = Profile._meta.concrete_fields
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(quote(f.column) for f in fields)} FROM "
            f"{quote(Profile._meta.db_table)} WHERE id = %s",
            [profile.pk],
        )
        raw = cursor.fetchone()
    read = Profile.objects.get(pk=profile.pk)
    for field, value in zip(fields, raw, strict=True):
        found, expression = compat.db_converters(field, Profile._meta.db_table, connection)
        for convert in found:
            value = convert(value, expression, connection)
        assert value == getattr(read, field.attname), field.name
    found, _ = compat.db_converters(
        Profile._meta.get_field("field_schemas"), Profile._meta.db_table, connection
    )
    assert found  # JSON is decoded by the field's from_db_value on every backend


@requires_postgres
def test_server_bound_cursor_binds_numbered_values_and_is_djangos_wrapper():
    with CaptureQueriesContext(connection) as queries, compat.server_bound_cursor(connection) as c:
        c.execute("SELECT $1::int + $2::int, $3::text", [2, 3, "x"])
        assert c.fetchone() == (5, "x")
    assert queries.captured_queries[-1]["sql"].startswith("SELECT $1::int + $2::int")
    with pytest.raises(DataError), compat.server_bound_cursor(connection) as cursor:
        cursor.execute("SELECT 1 / $1::int", [0])


@requires_postgres
def test_driver_cursor_copies_and_raises_djangos_errors():
    with compat.driver_cursor(connection) as cursor, cursor.copy("COPY (SELECT 7) TO STDOUT") as c:
        assert list(c.rows()) == [("7",)]
    with pytest.raises(DataError), compat.driver_cursor(connection) as cursor:
        cursor.execute("SELECT 1 / 0")


def test_log_statement_is_seen_as_the_wrapper_logs():
    with CaptureQueriesContext(connection) as queries:
        compat.log_statement(connection, "COPY t (a) FROM STDIN -- 3 rows", 0.01234)
    assert queries.captured_queries == [{"sql": "COPY t (a) FROM STDIN -- 3 rows", "time": "0.012"}]
    before = len(connection.queries_log)
    compat.log_statement(connection, "not logged", 0.0)  # DEBUG off, nothing capturing
    assert len(connection.queries_log) == before


def test_set_history_context_is_what_the_history_row_records():
    user = get_user_model().objects.create_user("historian")
    dimension = Dimension.objects.get(pk=factories.make_dimension().pk)
    assert compat.carries_history_context(dimension) is False
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    compat.set_history_context(dimension, user=user, reason="renamed", date=when)
    assert compat.carries_history_context(dimension) is True
    dimension.namespace = "urn:x:renamed"
    dimension.save()
    row = dimension.history.order_by("-history_id").first()
    assert (row.history_user, row.history_change_reason, row.history_date, row.history_type) == (
        user,
        "renamed",
        when,
        "~",
    )
    fresh = Dimension.objects.get(pk=dimension.pk)
    compat.set_history_context(fresh, reason="only a reason")
    assert compat.carries_history_context(fresh) is True
    fresh.save()
    row = dimension.history.order_by("-history_id").first()
    assert (row.history_user, row.history_change_reason) == (None, "only a reason")


def test_is_unvalidated_field_is_an_untyped_list_or_dict_child():
    assert compat.is_unvalidated_field(serializers.ListField().child) is True
    assert compat.is_unvalidated_field(serializers.DictField().child) is True
    assert not compat.is_unvalidated_field(
        serializers.ListField(child=serializers.CharField()).child
    )


class _ByName(CursorPagination):
    ordering = ("name",)
    page_size = 1


class _Marked(_ByName):
    def position_of(self, instance, ordering) -> str:
        return f"{super().position_of(instance, ordering)}!"


def _next_position(paginator: CursorPagination) -> tuple[str, str]:
    request = Request(APIRequestFactory().get("/dimensions/"))
    page = paginator.paginate_queryset(Dimension.objects.all(), request)
    cursor = parse_qs(urlparse(paginator.get_next_link()).query)["cursor"][0]
    decoded = parse_qs(base64.b64decode(cursor.encode()).decode())
    return page[0].name, decoded["p"][0]


def test_cursor_position_hook_is_the_position_drf_pages_by():
    for name in ("b-dim", "a-dim", "c-dim"):
        Dimension.objects.create(**_dimension_values(name))
    assert _next_position(_ByName()) == ("a-dim", "a-dim")
    assert _next_position(_Marked()) == ("a-dim", "a-dim!")


class _Schemed(serializers.Serializer):
    name = serializers.CharField(max_length=5)
    count = serializers.IntegerField(required=False, min_value=0)


def test_serializer_schema_is_spectaculars_schema_of_the_fields():
    auto_schema = AutoSchema()
    auto_schema.registry, auto_schema.method, auto_schema.path = ComponentRegistry(), "GET", "/x/"
    view = APIView()
    view.request, view.format_kwarg = None, None
    auto_schema.view = view
    assert compat.serializer_schema(auto_schema, _Schemed(), "response") == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 5},
            "count": {"type": "integer", "minimum": 0},
        },
        "required": ["name"],
    }


def _filter_for(field: models.Field) -> type | None:
    return next((klass for test, klass in compat.list_filter_registry() if test(field)), None)


def test_list_filter_registry_chooses_djangos_filter_class():
    meta = Dimension._meta
    assert _filter_for(meta.get_field("is_active")) is admin.BooleanFieldListFilter
    assert _filter_for(meta.get_field("created_at")) is admin.DateFieldListFilter
    assert _filter_for(meta.get_field("name")) is admin.AllValuesFieldListFilter
    assert _filter_for(Profile._meta.get_field("dimension")) is admin.RelatedFieldListFilter
    assert _filter_for(Profile._meta.get_field("status")) is admin.ChoicesFieldListFilter


@requires_postgres
def test_driver_connection_is_psycopgs_and_database_errors_are_djangos():
    import psycopg

    pg = compat.driver_connection(connection)
    assert isinstance(pg, psycopg.Connection)
    with pytest.raises(DataError), compat.database_errors(connection), pg.cursor() as cursor:
        cursor.execute("SELECT 1 / 0")


@requires_postgres
def test_raw_cursor_binds_numbered_placeholders_on_the_server():
    with compat.raw_cursor(compat.driver_connection(connection)) as cursor:
        cursor.execute("SELECT $1::int + $2::int, $1::int", [40, 2], binary=True)
        assert cursor.fetchone() == (42, 40)
