"""What several transparency tests start from."""

from __future__ import annotations

from grounding import services
from tests import factories
from transparency import sequencer


def two_links_and_a_revision(world):
    """Two registrations and a revision of the first, integrated: leaves 0, 1, 2."""
    first = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    second = factories.register_link(world.curator, world.dimension, world.profile, world.passage)
    services.revise(
        actor=world.curator,
        grounding_id=first.grounding_id,
        expected_revision=1,
        changes={"revision_reason": "scope", "support": {"support_scope": {"covers": "year"}}},
    )
    sequencer.integrate()
    return first, second
