"""common.kernel.bulk.new_instance builds what Model(**values) builds; the JSON text
the bulk writer sends is what json.dumps would send; ids from the pooled uuid7 are
unique, ordered and differ across a fork."""

from __future__ import annotations

import json
import os
import uuid

import pytest
from django.db import connection
from django.db.models import signals
from django.forms.models import model_to_dict
from hypothesis import given, settings
from hypothesis import strategies as st

from common.kernel.identifiers import uuid7
from common.kernel.rows import converter, new_instance
from grounding.models import GroundingLink, PassageBinding, StatementBinding
from policies.models import AuditEvent
from tests import factories

BULK_MODELS = (GroundingLink, StatementBinding, PassageBinding, AuditEvent)


@pytest.mark.parametrize("model", BULK_MODELS)
def test_no_init_signal_listens_to_the_models_built_without_init(model):
    # new_instance sends neither signal: it holds only while nobody listens.
    assert not signals.pre_init.has_listeners(model)
    assert not signals.post_init.has_listeners(model)


def _same(a, b) -> None:
    for field in type(a)._meta.concrete_fields:
        left, right = getattr(a, field.attname), getattr(b, field.attname)
        if field.has_default() and callable(field.default) and field.primary_key:
            assert isinstance(left, uuid.UUID) and isinstance(right, uuid.UUID)
            continue
        assert left == right, field.attname
    assert a._state.adding and a._state.db is None
    assert a._state.fields_cache.keys() == b._state.fields_cache.keys()


@pytest.mark.django_db
def test_a_link_and_its_bindings_match_their_init_built_twins():
    dimension, profile = factories.make_dimension(), factories.make_profile()
    statement_values = dict(
        link_id=uuid7(), bound_in_revision=1, statement_ref="s", answer_revision_ref="a@1",
        answer_selector={"type": "TextPositionSelector", "start": 0, "end": 2},
        answer_representation={"media_type": "text/plain"}, claim_scope={"kind": "x"},
    )  # fmt: skip
    _same(new_instance(StatementBinding, statement_values), StatementBinding(**statement_values))
    statement = new_instance(StatementBinding, statement_values)
    link_values = dict(
        grounding_id=statement_values["link_id"], dimension=dimension, profile=profile,
        owner_ref="o", support_scope={}, current_statement=statement,
    )  # fmt: skip
    built, twin = new_instance(GroundingLink, link_values), GroundingLink(**link_values)
    _same(built, twin)
    assert built.current_statement is statement
    assert built.current_statement_id == statement.binding_id
    assert built.dimension_id == dimension.pk and built.dimension is dimension
    assert built.time_uncertainty == {} and built.related_link_refs == []
    assert model_to_dict(built) == model_to_dict(twin)


@pytest.mark.parametrize("use_tz", [True, False])
def test_rows_stamp_auto_now_fields_as_pre_save_does(use_tz):
    from datetime import UTC, datetime

    from django.test import override_settings

    from common.kernel.rows import db_rows

    values = dict(
        link_id=uuid7(), bound_in_revision=1, statement_ref="s", answer_revision_ref="a@1",
        answer_selector={}, answer_representation={}, claim_scope={},
    )  # fmt: skip
    built, twin = new_instance(StatementBinding, values), StatementBinding(**values)
    field = StatementBinding._meta.get_field("created_at")
    with override_settings(USE_TZ=use_tz):
        before = datetime.now(UTC if use_tz else None)
        fields, rows = db_rows(StatementBinding, [built], connection)
        (row,) = list(rows)
        expected = field.pre_save(twin, True)
        after = datetime.now(UTC if use_tz else None)
        sent = converter(field)(built.created_at, connection)
    stamped = built.created_at
    # Taken per row, set on the instance, sent as its field sends it, aware exactly
    # when pre_save's is.
    assert before <= stamped <= expected <= after
    assert row[fields.index(field)] == sent
    assert (stamped.tzinfo is None) == (expected.tzinfo is None) == (not use_tz)


def test_an_unknown_field_is_a_type_error_as_with_init():
    with pytest.raises(TypeError, match="unexpected fields: \\['nonsense'\\]"):
        new_instance(AuditEvent, {"nonsense": 1})
    with pytest.raises(TypeError):
        AuditEvent(nonsense=1)


_json = st.recursive(
    st.text() | st.integers(-(2**80), 2**80) | st.floats(allow_nan=False) | st.none()
    | st.booleans(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=12,
)  # fmt: skip


@settings(max_examples=300, derandomize=True)
@given(_json)
def test_the_json_text_sent_parses_to_what_json_dumps_would_send(value):
    convert = converter(GroundingLink._meta.get_field("support_scope"))
    if value is None:  # SQL NULL, not JSON null: Django's own path decides it
        assert convert(value, connection) is None
        return
    try:
        expected = json.dumps(value)
    except ValueError:  # a lone surrogate json.dumps escapes: the walks refuse it first
        return
    assert json.loads(convert(value, connection)) == json.loads(expected)


def test_ids_are_version_7_unique_and_ordered():
    ids = [uuid7() for _ in range(20_000)]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)
    assert {i.version for i in ids} == {7} and {i.variant for i in ids} == {uuid.RFC_4122}


def test_a_forked_child_draws_other_random_bits_than_its_parent():
    uuid7()  # the parent's pool holds unused bits now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report one id, exit at once
        os.write(write, uuid7().bytes)
        os._exit(0)
    os.close(write)
    child = uuid.UUID(bytes=os.read(read, 16))
    os.waitpid(pid, 0)
    parent = uuid7()
    # The low 62 bits are the random part; the pool must not hand both the same.
    assert child.int & ((1 << 62) - 1) != parent.int & ((1 << 62) - 1)
