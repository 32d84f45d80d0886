"""common.kernel.reads: a plain statement's rows as the instances a queryset gives,
converters applied, on both databases."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from common.kernel import reads
from policies.models import Dimension, Profile
from tests.factories import make_dimension, make_profile

pytestmark = pytest.mark.django_db


def _values(obj) -> dict:
    return {f.attname: getattr(obj, f.attname) for f in type(obj)._meta.concrete_fields}


def _profile_sql() -> str:
    return (
        f"SELECT {reads.columns(Profile, 'p')}, 7, 'x' FROM {Profile._meta.db_table} p ORDER BY id"
    )


def test_rows_are_the_instances_the_queryset_gives_with_converters_applied():
    first = make_profile(version="3.0.0", endpoint_role_map={"source": ["prov:Entity"]})
    second = make_profile(version="3.0.1", publish=False)

    found = reads.read(_profile_sql(), [], (Profile,))

    expected = list(Profile.objects.order_by("id"))
    assert [row[0] for row in found] == expected
    assert [_values(row[0]) for row in found] == [_values(p) for p in expected]
    by_version = {row[0].version: row[0] for row in found}
    # JSON arrives decoded and datetimes aware on either database (SQLite sends text).
    assert by_version["3.0.0"].endpoint_role_map == {"source": ["prov:Entity"]}
    assert isinstance(by_version["3.0.0"].published_at, datetime)
    assert by_version["3.0.0"].published_at.tzinfo is not None
    assert by_version["3.0.0"].published_at == first.published_at
    assert by_version["3.0.1"].published_at is None
    assert second.pk == by_version["3.0.1"].pk
    # Columns after the model's are passed on as the driver gave them.
    assert {row[1:] for row in found} == {(7, "x")}
    # Loaded, not new: a save() updates.
    assert all(not row[0]._state.adding and row[0]._state.db == "default" for row in found)


def test_two_models_in_one_row_and_no_rows():
    dimension = make_dimension("reads-a")
    user = get_user_model().objects.create_user("reads-user")
    sql = (
        f"SELECT {reads.columns(Dimension, 'd')}, {reads.columns(get_user_model(), 'u')} "
        f"FROM {Dimension._meta.db_table} d, {get_user_model()._meta.db_table} u "
        "WHERE d.name = %s AND u.username = %s"
    )

    ((got_dimension, got_user),) = reads.read(
        sql, ["reads-a", "reads-user"], (Dimension, get_user_model())
    )

    assert _values(got_dimension) == _values(Dimension.objects.get(pk=dimension.pk))
    assert _values(got_user) == _values(get_user_model().objects.get(pk=user.pk))
    assert reads.read(sql, ["no-such", "reads-user"], (Dimension, get_user_model())) == []


def test_columns_name_every_concrete_column_in_field_order():
    quote = connection.ops.quote_name
    assert reads.columns(Dimension, "d") == ", ".join(
        f"d.{quote(f.column)}" for f in Dimension._meta.concrete_fields
    )
