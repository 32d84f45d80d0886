"""common.kernel.bulk.update_with_history: the rows and the "~" history rows that save()
per row would leave, JSON and foreign keys included."""

from __future__ import annotations

from django.db import transaction

from common.kernel.bulk import update_with_history
from grounding import services
from grounding.models import GroundingLink
from tests import factories


def test_updated_rows_and_their_history_hold_what_save_would(world):
    items = [factories.link_payload(world.dimension, world.profile) for _ in range(20)]
    links = services.register_many(actor=world.curator, items=items)
    other = services.register(
        actor=world.curator, payload=factories.link_payload(world.dimension, world.profile)
    )
    with transaction.atomic():
        fresh = list(GroundingLink.objects.filter(pk__in=[x.pk for x in links]).order_by("pk"))
        for n, link in enumerate(fresh):
            link.revision += 1
            link.owner_ref = f"role:owner-{n}"
            link.support_scope = {"covers": f"part {n}", "nested": [n, None, "ü"]}
            link.current_passage_id = other.current_passage_id
        update_with_history(
            GroundingLink,
            fresh,
            ["revision", "owner_ref", "support_scope", "current_passage"],
            user=world.curator,
            change_reason="bulk update test",
        )
    for n, link in enumerate(fresh):
        stored = GroundingLink.objects.get(pk=link.pk)
        assert (stored.revision, stored.owner_ref) == (2, f"role:owner-{n}")
        assert stored.support_scope == {"covers": f"part {n}", "nested": [n, None, "ü"]}
        assert stored.current_passage_id == other.current_passage_id
        assert stored.updated_at > link.observed_at
        latest = stored.history.order_by("-history_date", "-history_id").first()
        assert latest.history_type == "~"
        assert latest.history_change_reason == "bulk update test"
        assert latest.history_user_id == world.curator.pk
        assert (latest.revision, latest.owner_ref, latest.support_scope) == (
            stored.revision,
            stored.owner_ref,
            stored.support_scope,
        )
        assert stored.history.count() == 2
