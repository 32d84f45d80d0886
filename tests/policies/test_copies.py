"""common.kernel.copies: rows copied by the database with a few columns changed hold
what inserting the changed instance would, and each has its "+" history row."""

from __future__ import annotations

import pytest

from common.kernel.copies import copy_with_history
from grounding import services
from grounding.choices import RebindRequirement
from grounding.models import StatementBinding
from tests import factories

COPIED = ("binding_id", "created_at", "predecessor_id", "bound_in_revision",
          "rebind_requirement")  # fmt: skip


def _values(row) -> dict:
    return {f.attname: getattr(row, f.attname) for f in StatementBinding._meta.concrete_fields}


@pytest.mark.parametrize("count", [1, 20])
def test_copies_are_their_sources_but_for_the_changes_with_a_history_row_each(world, count):
    items = [factories.link_payload(world.dimension, world.profile) for _ in range(count)]
    for n, item in enumerate(items):
        item["statement"]["answer_selector"] = {"type": "TextPositionSelector", "start": n,
                                                "end": n + 3}  # fmt: skip
    links = services.register_many(actor=world.curator, items=items)
    sources = [link.current_statement_id for link in links][::-1]  # an order of our own
    keys = copy_with_history(
        StatementBinding, sources,
        {"bound_in_revision": list(range(2, count + 2)), "predecessor_id": sources,
         "rebind_requirement": RebindRequirement.REVIEW_REQUIRED},
        user=world.curator, change_reason="copied",
    )  # fmt: skip
    assert len(keys) == count and not set(keys) & set(sources)
    stored = StatementBinding.objects.in_bulk(keys)
    originals = StatementBinding.objects.in_bulk(sources)
    for index, (key, source) in enumerate(zip(keys, sources, strict=True)):
        copy, original = _values(stored[key]), _values(originals[source])
        assert copy["predecessor_id"] == source
        assert copy["bound_in_revision"] == index + 2
        assert copy["rebind_requirement"] == "review_required"
        assert copy["created_at"] >= original["created_at"]
        assert {k: v for k, v in copy.items() if k not in COPIED} == {
            k: v for k, v in original.items() if k not in COPIED
        }
        (history,) = StatementBinding.history.filter(binding_id=key)
        tracked = [f.attname for f in StatementBinding.history.model.tracked_fields]
        assert {a: getattr(history, a) for a in tracked} == {a: copy[a] for a in tracked}
        assert (history.history_type, history.history_change_reason) == ("+", "copied")
        assert history.history_user_id == world.curator.pk


def test_a_per_row_change_needs_one_value_per_source(world):
    link = services.register_many(
        actor=world.curator, items=[factories.link_payload(world.dimension, world.profile)]
    )[0]
    with pytest.raises(ValueError, match="one value per source"):
        copy_with_history(
            StatementBinding, [link.current_statement_id], {"bound_in_revision": [2, 3]},
            user=world.curator, change_reason="copied",
        )  # fmt: skip
    assert copy_with_history(StatementBinding, [], {}, user=None, change_reason="x") == []
